import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLN_CLOUDLINUX, MANAGE2_ADMIN, orderActiveOf, useProviderBridges } from "../helpers/providers.js";
import { clnBehindTheBridge, manage2BehindTheBridge } from "../reconcile/helpers.js";
import { runCli } from "./helpers.js";

/**
 * The CLI's reconcile and adopt read every configured provider's list, as POST /admin/reconcile
 * and POST /admin/adopt do (service-contract.md section 12), and its listings show each licence's
 * provider. Each command runs with the env of a bridge buying from the reseller, Manage2 and CLN,
 * each a sandbox of its own.
 */

interface Drift {
  kind: string;
  provider: string;
  ip: string;
}

describe("the command line with three providers", () => {
  const start = useProviderBridges();

  it("reconcile reads Manage2's and CLN's lists too: licences no service accounts for, each naming its provider", async () => {
    const { sbs, bridge } = await start();
    await orderActiveOf(bridge, "40", "203.0.113.170");
    await manage2BehindTheBridge(sbs).licenseAdd({ ip: "203.0.113.171", packageid: MANAGE2_ADMIN, force: false, reactivateok: false });
    await clnBehindTheBridge(sbs).register({ ip: "203.0.113.172", type: CLN_CLOUDLINUX });

    const json = await runCli(["reconcile", "--json"], bridge.env);
    expect(json.code).toBe(1);
    expect(json.json<{ drift: Drift[] }>().drift.map((d) => [d.kind, d.provider, d.ip])).toEqual([
      ["unknown_locally", "manage2", "203.0.113.171"],
      ["unknown_locally", "cln", "203.0.113.172"],
    ]);

    const table = await runCli(["reconcile"], bridge.env);
    expect(table.stdout).toMatch(/^KIND\s+SERVICE_ID\s+IP\s+TYPE\s+PROVIDER\s/);
    expect(table.stdout).toMatch(/unknown_locally\s+-\s+203\.0\.113\.172\s+cloudlinux\s+cln\s/);
  });

  it("reconcile with no reseller configured compares the providers it has", async () => {
    const { sbs, bridge } = await start({ withoutReseller: true });
    await orderActiveOf(bridge, "40", "203.0.113.173");
    await clnBehindTheBridge(sbs).register({ ip: "203.0.113.174", type: CLN_CLOUDLINUX });

    const run = await runCli(["reconcile", "--json"], bridge.env);
    expect(run.stderr).not.toContain("no reseller");
    expect(run.json<{ drift: Drift[] }>().drift.map((d) => [d.kind, d.provider, d.ip])).toEqual([["unknown_locally", "cln", "203.0.113.174"]]);
    expect(sbs.reseller.sandbox.requests()).toEqual([]);
  });

  it("reconcile says in one line which provider's list it could not read", async () => {
    const { sbs, bridge } = await start();
    await sbs.manage2Running.close();

    const run = await runCli(["reconcile"], bridge.env);
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^license-bridge: cannot read cPanel Manage2's licence list: /)]);
  });

  it("adopt plans each row against its own provider's list and shows the provider of each row and orphan", async () => {
    const { sbs, bridge } = await start();
    await manage2BehindTheBridge(sbs).licenseAdd({ ip: "203.0.113.175", packageid: MANAGE2_ADMIN, force: false, reactivateok: false });
    await clnBehindTheBridge(sbs).register({ ip: "203.0.113.176", type: CLN_CLOUDLINUX });
    const dir = mkdtempSync(join(tmpdir(), "lb-adopt-providers-"));
    const file = join(dir, "services.csv");
    writeFileSync(file, "service_identifier,package_identifier,ip,billing_cycle\nm2-row,40,203.0.113.175,monthly\n");

    const json = await runCli(["adopt", file, "--json"], bridge.env);
    expect(json.code).toBe(0);
    expect(json.json()).toEqual({
      plan: [{ service_identifier: "m2-row", provider: "manage2", action: "adopt", reason: expect.stringContaining("cPanel Manage2 holds"), cost: 0 }],
      orphans: [{ provider: "cln", ip: "203.0.113.176", type: "cloudlinux", monthly_cost: 10 }],
    });

    const table = await runCli(["adopt", file], bridge.env);
    expect(table.stdout).toMatch(/^m2-row\s+adopt\s+0\s+manage2\s/m);
    expect(table.stdout).toMatch(/^203\.0\.113\.176\s+cloudlinux\s+cln\s+10$/m);
  });
});
