import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandbox, type RunningSandbox } from "../../src/sandbox/app.js";
import { SandboxState } from "../../src/sandbox/state.js";
import { createUpstream, type Upstream } from "../../src/reseller/upstream.js";
import { createV1Client, type V1Client } from "../../src/reseller/v1.js";
import { sameIp } from "../../src/vocabulary/ip-address.js";
import { DEFAULT_SANDBOX_TOKENS, MAIN_RESELLER_ID } from "../../src/vocabulary/sandbox-identity.js";

// The lifecycle looks up one IP's licences in the reseller's list (acquire, renew, change-ip,
// change-core). It reads the list item by item and keeps only the items at that IP: the
// licences must be exactly those the whole list, filtered, gave.

let dir: string;
let running: RunningSandbox;
let v1: V1Client;
let upstream: Upstream;

/** Licences at several IPs, the same address spelled several ways, as the reseller's list may write them. */
const HELD: Array<[ip: string, type: string, extra?: Record<string, unknown>]> = [
  ["203.0.113.10", "cpanel"],
  ["203.0.113.10", "softaculous", { free: true, parent: "cpanel" }],
  ["203.0.113.10", "litespeed", { variant: "litespeed8", status: "suspended" }],
  ["::ffff:203.0.113.10", "cloudlinux"],
  ["203.0.113.11", "cpanel"],
  ["2001:DB8::1", "plesk", { bundle_key: "bk-1" }],
  ["2001:db8:0:0:0:0:0:1", "cloudlinux"],
  ["2001:0db8::0002", "cpanel"],
  ["198.51.100.7", "whmcs"],
];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "lb-licenses-at-"));
  const statePath = join(dir, "sandbox.json");
  new SandboxState({ openingBalance: 1000, now: () => new Date(), statePath }).reset();
  const state = JSON.parse(readFileSync(statePath, "utf8")) as { licenses: unknown[] };
  HELD.forEach(([ip, type, extra], i) =>
    state.licenses.push({
      account_id: MAIN_RESELLER_ID,
      ip,
      type,
      status: "active",
      billingcycle: 12,
      created_at: "2026-01-01T00:00:00.000Z",
      expires_at: "2027-01-01T00:00:00.000Z",
      key: `UP-${i}`,
      ...extra,
    }),
  );
  writeFileSync(statePath, JSON.stringify(state));
  running = await createSandbox({ statePath }).listen(0);
  v1 = createV1Client({ baseUrl: running.apiUrl, token: DEFAULT_SANDBOX_TOKENS.reseller });
  upstream = createUpstream("v1", v1, null);
});

afterAll(async () => {
  await v1.close();
  await running.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the upstream's licences at one IP", () => {
  it.each([
    ["203.0.113.10", 4],
    ["::ffff:203.0.113.10", 4],
    ["203.0.113.11", 1],
    ["2001:db8::1", 2],
    ["2001:0DB8:0::0001", 2],
    ["2001:db8::2", 1],
    ["198.51.100.7", 1],
    ["198.51.100.8", 0],
  ])("are exactly what the whole list, filtered by IP, gives: %s", async (ip, count) => {
    const filtered = (await v1.listLicenses()).filter((l) => sameIp(l.ip, ip));
    const found = await upstream.licensesAt(ip);
    expect(found).toEqual(filtered);
    expect(found).toHaveLength(count);
  });

  it("are full licences: raw item, billing cycle and parent included", async () => {
    const [cpanel, softaculous, litespeed] = await upstream.licensesAt("203.0.113.10");
    expect(cpanel).toMatchObject({ ip: "203.0.113.10", type: "cpanel", billingcycle: 12, raw: { key: "UP-0", ip: "203.0.113.10" } });
    expect(softaculous).toMatchObject({ type: "softaculous", free: true, parent: "cpanel" });
    expect(litespeed).toMatchObject({ type: "litespeed", variant: "litespeed8", status: "suspended" });
  });
});
