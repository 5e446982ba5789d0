import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../cli/helpers.js";
import { holdUpstream, useAdoptionWorld } from "./helpers.js";

const HEADER = "service_identifier,package_identifier,ip,customer_email,customer_name,billing_cycle,next_due_date,status";

describe("license-bridge adopt <file>", () => {
  const world = useAdoptionWorld();

  it("plans a CSV export as a table with the orphans' total, and applies it with --apply", async () => {
    const { sb, bridge } = world();
    await holdUpstream(sb, "203.0.113.120", "cpanel");
    await holdUpstream(sb, "203.0.113.121", "cloudlinux");
    const file = join(bridge.dir, "services.csv");
    writeFileSync(file, `${HEADER}\r\n101,12,203.0.113.120,ann@example.com,"Example, Ann",Monthly,2030-01-01 00:00:00,Active\r\n102,12,203.0.113.122,,,annually,,pending\r\n`);

    const plan = await runCli(["adopt", file], bridge.env);
    expect(plan.stderr).toBe("");
    expect(plan.code).toBe(0);
    expect(plan.stdout).toMatch(/^101\s+adopt\s+0\s/m);
    expect(plan.stdout).toMatch(/^102\s+buy\s+180\s/m);
    expect(plan.stdout).toMatch(/^203\.0\.113\.121\s+cloudlinux\s+reseller\s+12$/m);
    expect(plan.stdout).toContain("total monthly cost of the orphans: 12");
    expect(await bridge.service.services.get("101")).toBeUndefined();

    const applied = await runCli(["adopt", file, "--apply", "--json"], bridge.env);
    expect(applied.code).toBe(0);
    expect(applied.json<{ plan: { action: string }[] }>().plan.map((i) => i.action)).toEqual(["adopt", "buy"]);
    expect(await bridge.service.services.get("101")).toMatchObject({ status: "active", customer_name: "Example, Ann", paid_until: Date.parse("2030-01-01T00:00:00Z") });
    expect(await bridge.service.services.get("102")).toBeUndefined();
  });

  it("reads JSON, an array or {services}, and answers --json as the admin API does", async () => {
    const { sb, bridge } = world();
    await holdUpstream(sb, "203.0.113.130", "cpanel");
    const rows = [{ service_identifier: 201, package_identifier: 12, ip: "203.0.113.130", billing_cycle: 1 }];
    const array = join(bridge.dir, "array.json");
    const wrapped = join(bridge.dir, "wrapped.json");
    writeFileSync(array, JSON.stringify(rows));
    writeFileSync(wrapped, JSON.stringify({ services: rows }));

    for (const file of [array, wrapped]) {
      const run = await runCli(["adopt", file, "--json"], bridge.env);
      expect(run.code).toBe(0);
      expect(run.json()).toEqual({ plan: [{ service_identifier: "201", provider: "reseller", action: "adopt", reason: expect.any(String), cost: 0 }], orphans: [] });
    }
  });

  it("names the line and column of a bad CSV row, and the row and field of a bad JSON one, planning nothing", async () => {
    const { bridge } = world();
    const csv = join(bridge.dir, "bad.csv");
    writeFileSync(csv, `${HEADER}\n101,12,203.0.113.120,,,monthly,,active\n102,12,not-an-ip,,,monthly,,active\n`);
    const json = join(bridge.dir, "bad.json");
    writeFileSync(json, JSON.stringify({ services: [{ service_identifier: "1", package_identifier: "12", ip: "203.0.113.1", billing_cycle: "weekly" }] }));
    const header = join(bridge.dir, "header.csv");
    writeFileSync(header, "service_identifier,package,ip\n1,12,203.0.113.1\n");

    const badCsv = await runCli(["adopt", csv], bridge.env);
    expect(badCsv.code).toBe(1);
    expect(badCsv.stderr).toContain(`${csv}: line 3, column ip: must be an IPv4 or IPv6 address`);
    const badJson = await runCli(["adopt", json], bridge.env);
    expect(badJson.code).toBe(1);
    expect(badJson.stderr).toContain(`${json}: services[0].billing_cycle: must be one of`);
    const badHeader = await runCli(["adopt", header], bridge.env);
    expect(badHeader.stderr).toContain('line 1, column 2 ("package"): not a known column');
    expect((await runCli(["adopt", csv, "--buy"], bridge.env)).code).toBe(2);
  });

  it("refuses a binary or non-UTF-8 file with one line that prints none of its bytes, planning nothing", async () => {
    const { bridge } = world();
    const files = {
      // A spreadsheet saved where the CSV should be: a zip, with a terminal escape among its bytes.
      "services.xlsx": Buffer.concat([Buffer.from("PK\x03\x04\x14\x00\x06\x00", "latin1"), Buffer.from("\x1b[2J\x07service_identifier\xff\xfe", "latin1")]),
      // Excel's "Unicode text": UTF-16 with its byte-order mark.
      "services-utf16.csv": Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(`${HEADER}\n101,12,203.0.113.120,,,monthly,,active\n`, "utf16le")]),
      // An export in Latin-1: "Müller" is not UTF-8.
      "services-latin1.csv": Buffer.from(`${HEADER}\n101,12,203.0.113.120,,M\xfcller,monthly,,active\n`, "latin1"),
      // Valid UTF-8 carrying a terminal escape.
      "services-escape.csv": Buffer.from(`${HEADER}\n101,12,203.0.113.120,,\x1b]0;owned\x07,monthly,,active\n`, "utf8"),
    };
    for (const [name, bytes] of Object.entries(files)) {
      const file = join(bridge.dir, name);
      writeFileSync(file, bytes);

      const run = await runCli(["adopt", file], bridge.env);

      expect(run.code, name).toBe(1);
      expect(run.stdout, name).toBe("");
      const [line, ...rest] = run.stderr.split("\n");
      expect(rest, name).toEqual([""]);
      expect(line!.startsWith(`license-bridge: ${file}: `), line).toBe(true);
      expect(line, name).toMatch(/UTF-8|text/);
      // Nothing of the file reaches the terminal: no control character, no byte of it beyond the name.
      // eslint-disable-next-line no-control-regex -- finding control characters is the point
      expect(run.stderr, name).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\ufffd]/);
      expect(run.stderr, name).not.toMatch(/PK|service_identifier|M.ller|owned/);
    }
    expect(await bridge.service.services.get("101")).toBeUndefined();
  });
});
