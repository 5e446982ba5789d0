import { afterEach, describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { loadConfig } from "../../src/config/load.js";
import { BALANCE_TTL_MS } from "../../src/reseller/balance.js";
import { startTestBridge, startTestSandbox, type TestBridge, type TestSandbox } from "../helpers/bridge.js";
import { orderActive, upstreamCalls, usePair } from "../helpers/e2e-harness.js";
import { DEFAULT_SANDBOX_TOKENS, MAIN_RESELLER_ID } from "../../src/vocabulary/sandbox-identity.js";

/**
 * The reseller balance of the bridge's own account (issue 23 item 5): the gauge
 * license_bridge_reseller_balance and GET /admin/balance, read from the sandbox's admin
 * endpoint over loopback exactly as from a live reseller.
 */

/** The sandbox's own reseller: the account its reseller token belongs to. */
const OWN_ACCOUNT = String(MAIN_RESELLER_ID);
const CONFIGURED = { RESELLER_ACCOUNT_ID: OWN_ACCOUNT, RESELLER_ADMIN_TOKEN: DEFAULT_SANDBOX_TOKENS.admin };

/** The values of the unlabelled samples named `name` in a Prometheus text: [] when there is none. */
function samples(text: string, name: string): number[] {
  return text
    .split("\n")
    .filter((l) => l.startsWith(`${name} `))
    .map((l) => Number(l.slice(name.length + 1)));
}

async function scrape(url: string): Promise<{ balance: number[]; up: number[]; text: string }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return { balance: samples(text, "license_bridge_reseller_balance"), up: samples(text, "license_bridge_reseller_balance_up"), text };
}

const balanceCalls = (sb: TestSandbox) => upstreamCalls(sb, "admin-reseller-balance");

describe("the reseller balance, configured (RESELLER_ACCOUNT_ID and an admin-role token)", () => {
  // A pair per test, not per file: the tests read the balance from its first 1000 and count every
  // balance call the sandbox received, and the bridge keeps a reading for a minute.
  const pair = usePair({ env: CONFIGURED });

  it("/metrics reports the sandbox's balance, and GET /admin/balance answers it with when it was read", async () => {
    const { sb, bridge } = pair();
    const before = Date.now();
    expect(await scrape(bridge.url)).toMatchObject({ balance: [sb.sandbox.balance()], up: [1] });
    expect(sb.sandbox.balance()).toBe(1000);

    const res = await bridge.admin("/admin/balance");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ balance: 1000, checked_at: expect.any(String), reason: null });
    expect(Date.parse(res.body.checked_at as string)).toBeGreaterThanOrEqual(before - 1000);
    // One read served the scrape and the admin call: the reseller was asked once, as the admin, for that account.
    expect(balanceCalls(sb)).toEqual([expect.objectContaining({ status: 200, params: { id: OWN_ACCOUNT } })]);
  });

  it("follows a purchase when asked for a fresh reading, which the next scrape reports too", async () => {
    const { sb, bridge } = pair();
    expect((await bridge.admin("/admin/balance")).body.balance).toBe(1000);
    await orderActive(bridge);
    const after = sb.sandbox.balance();
    expect(after).toBeLessThan(1000);

    // Within the minute the reading is kept: no new call.
    expect((await bridge.admin("/admin/balance")).body.balance).toBe(1000);
    expect((await scrape(bridge.url)).balance).toEqual([1000]);
    expect(balanceCalls(sb)).toHaveLength(1);

    expect((await bridge.admin("/admin/balance?fresh=true")).body).toMatchObject({ balance: after, reason: null });
    expect((await scrape(bridge.url)).balance).toEqual([after]);
    expect(balanceCalls(sb)).toHaveLength(2);
  });

  it("GET /admin/balance takes the admin token and refuses a query it does not know", async () => {
    const { bridge } = pair();
    expect((await fetch(`${bridge.url}/admin/balance`)).status).toBe(401);
    expect((await bridge.admin("/admin/balance?fresh=yes")).status).toBe(422);
    expect((await bridge.admin("/admin/balance?account=2")).status).toBe(422);
  });
});

describe("the reseller balance over time", () => {
  let sb: TestSandbox | undefined;
  let bridge: TestBridge | undefined;
  afterEach(async () => {
    await bridge?.close();
    await sb?.close();
    bridge = sb = undefined;
  });

  it("the gauge follows a purchase once the 60 s reading has expired (service clock moved, no sleep)", async () => {
    sb = await startTestSandbox();
    const clock = manualClock(Date.now());
    bridge = await startTestBridge(sb, { clock, env: CONFIGURED });
    expect((await scrape(bridge.url)).balance).toEqual([1000]);

    await orderActive(bridge);
    const after = sb.sandbox.balance();
    expect(after).toBeLessThan(1000);
    clock.advance(BALANCE_TTL_MS - 1);
    expect((await scrape(bridge.url)).balance).toEqual([1000]);
    clock.advance(1);
    expect((await scrape(bridge.url)).balance).toEqual([after]);
    expect((await bridge.admin("/admin/balance")).body).toEqual({ balance: after, checked_at: new Date(clock.now()).toISOString(), reason: null });
    expect(balanceCalls(sb)).toHaveLength(2);
  });
});

describe("the reseller balance, not configured (live mode without RESELLER_ACCOUNT_ID)", () => {
  // A pair per test, not per file: the second test's reload configures the balance, and the first
  // checks that the reseller was asked nothing.
  const pair = usePair();

  it("is null with the reason, asks the reseller nothing, and leaves no sample in /metrics (not a 0)", async () => {
    const { sb, bridge } = pair();
    const res = await bridge.admin("/admin/balance?fresh=true");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ balance: null, checked_at: null, reason: expect.stringMatching(/^RESELLER_ACCOUNT_ID is not set/) });

    const { balance, up, text } = await scrape(bridge.url);
    expect({ balance, up }).toEqual({ balance: [], up: [] });
    expect(text).toContain("# TYPE license_bridge_reseller_balance gauge");
    expect(balanceCalls(sb)).toEqual([]);
  });

  it("a reload (SIGHUP) that sets it makes the balance readable without a restart", async () => {
    const { sb, bridge } = pair();
    expect((await bridge.admin("/admin/balance")).body.balance).toBeNull();
    const { restartNeeded } = bridge.service.reload(loadConfig({ env: { ...bridge.env, ...CONFIGURED }, cwd: process.cwd() }));
    expect(restartNeeded).toEqual([]);
    expect((await bridge.admin("/admin/balance")).body).toMatchObject({ balance: sb.sandbox.balance(), reason: null });
    expect((await scrape(bridge.url)).balance).toEqual([sb.sandbox.balance()]);
  });
});

describe("the reseller balance with a token that lacks the admin role", () => {
  // RESELLER_ADMIN_TOKEN unset: the reseller token (RESELLER_API_TOKEN) is used, and refused.
  const pair = usePair({ env: { RESELLER_ACCOUNT_ID: OWN_ACCOUNT } });

  it("says the token lacks the admin role; /metrics has no balance and _up 0", async () => {
    const { sb, bridge } = pair();
    const res = await bridge.admin("/admin/balance");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ balance: null, checked_at: expect.any(String), reason: expect.stringMatching(/^the token lacks the admin role: .*RESELLER_ADMIN_TOKEN/) });
    expect(await scrape(bridge.url)).toMatchObject({ balance: [], up: [0] });
    expect(balanceCalls(sb)).toEqual([expect.objectContaining({ status: 403 })]);
  });
});
