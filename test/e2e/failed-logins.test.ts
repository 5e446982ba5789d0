import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { TEST_ADMIN_TOKEN, type TestBridge } from "../helpers/bridge.js";
import { usePair, usePairInTest } from "../helpers/e2e-harness.js";
import { operatorsFile } from "../helpers/operators.js";
import { ConsoleClient } from "../console/client.js";

/**
 * Failed tokens per client address (issue 34, item 4): the admin API's bearer tokens and the
 * console's logins count together, whatever succeeds in between; the eleventh failure's address
 * is refused with 429 and Retry-After, the right token included, until the window lets it in.
 */

const VIEWER = "failed-logins-viewer-token-0123";
const operators = operatorsFile([{ name: "vera", role: "viewer", token: VIEWER }]);

async function admin(bridge: TestBridge, token: string | undefined, headers: Record<string, string> = {}) {
  const res = await fetch(`${bridge.url}/admin/licenses`, { headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...headers } });
  return { status: res.status, retryAfter: res.headers.get("retry-after"), body: (await res.json()) as Record<string, unknown> };
}

const wrong = (i: number) => `not-anyones-token-${i}-0123456789`;

describe("failed admin API tokens from one address", () => {
  const pair = usePair({ env: { OPERATORS_FILE: operators } });

  it("are refused with 429, Retry-After and when to try again after ten, even with the admin's token", async () => {
    const { bridge } = pair();
    for (let i = 0; i < 10; i++) expect((await admin(bridge, wrong(i))).status).toBe(401);
    const refused = await admin(bridge, TEST_ADMIN_TOKEN);
    expect(refused.status).toBe(429);
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    expect(refused.body).toMatchObject({ code: "too_many_failures", retry_after_seconds: Number(refused.retryAfter) });
    expect(refused.body.error).toMatch(/try again in 15 minutes/);
  });

  it("count on when a valid token succeeds in between", async () => {
    const { bridge } = pair();
    for (let i = 0; i < 9; i++) expect((await admin(bridge, wrong(i))).status).toBe(401);
    expect((await admin(bridge, VIEWER)).status).toBe(200);
    expect((await admin(bridge, wrong(9))).status).toBe(401);
    expect((await admin(bridge, TEST_ADMIN_TOKEN)).status).toBe(429);
  });

  it("count together with failed console logins: one guesser, one count", async () => {
    const { bridge } = pair();
    const browser = new ConsoleClient(bridge.url);
    for (let i = 0; i < 5; i++) expect((await browser.login(wrong(i))).status).toBe(401);
    for (let i = 5; i < 10; i++) expect((await admin(bridge, wrong(i))).status).toBe(401);
    expect((await browser.login(TEST_ADMIN_TOKEN)).status).toBe(429);
    expect((await admin(bridge, TEST_ADMIN_TOKEN)).status).toBe(429);
  });

  it("do not count requests that bring no token at all: they guess nothing", async () => {
    const { bridge } = pair();
    for (let i = 0; i < 12; i++) expect((await admin(bridge, undefined)).status).toBe(401);
    expect((await admin(bridge, TEST_ADMIN_TOKEN)).status).toBe(200);
  });

  it("leave the provisioning API's token out of the count, which is the panel's, not an operator's", async () => {
    const { bridge } = pair();
    for (let i = 0; i < 12; i++) expect((await bridge.provision("info", { service_identifier: "x" }, { token: wrong(i) })).status).toBe(401);
    expect((await admin(bridge, TEST_ADMIN_TOKEN)).status).toBe(200);
    expect((await bridge.provision("info", { service_identifier: "x" })).status).toBe(404);
  });

  it("ignore X-Forwarded-For when no proxy is trusted: the socket's address is counted", async () => {
    const { bridge } = pair();
    for (let i = 0; i < 10; i++) expect((await admin(bridge, wrong(i), { "x-forwarded-for": `198.51.100.${i + 1}` })).status).toBe(401);
    expect((await admin(bridge, TEST_ADMIN_TOKEN, { "x-forwarded-for": "198.51.100.200" })).status).toBe(429);
  });
});

describe("the failure window, on the bridge's clock", () => {
  const startPair = usePairInTest();

  it("lets a refused address in again once Retry-After has passed", async () => {
    const clock = manualClock(Date.now());
    const { bridge } = await startPair({ clock, env: { OPERATORS_FILE: operators } });
    for (let i = 0; i < 10; i++) expect((await admin(bridge, wrong(i))).status).toBe(401);
    const refused = await admin(bridge, TEST_ADMIN_TOKEN);
    expect(refused.status).toBe(429);
    clock.advance(Number(refused.retryAfter) * 1000 - 1000);
    expect((await admin(bridge, TEST_ADMIN_TOKEN)).status).toBe(429);
    clock.advance(1000);
    expect((await admin(bridge, TEST_ADMIN_TOKEN)).status).toBe(200);
  });
});

describe("behind a trusted proxy (TRUST_PROXY)", () => {
  const pair = usePair({ env: { OPERATORS_FILE: operators, TRUST_PROXY: "loopback" } });

  it("counts two clients apart, by the address the proxy forwards", async () => {
    const { bridge } = pair();
    const from = (ip: string) => ({ "x-forwarded-for": ip });
    for (let i = 0; i < 10; i++) expect((await admin(bridge, wrong(i), from("203.0.113.7"))).status).toBe(401);
    expect((await admin(bridge, TEST_ADMIN_TOKEN, from("203.0.113.7"))).status).toBe(429);
    expect((await admin(bridge, TEST_ADMIN_TOKEN, from("198.51.100.8"))).status).toBe(200);
    const guesser = new ConsoleClient(bridge.url);
    guesser.headers = from("203.0.113.7");
    expect((await guesser.login(TEST_ADMIN_TOKEN)).status).toBe(429);
    const other = new ConsoleClient(bridge.url);
    other.headers = from("198.51.100.8");
    expect((await other.login(TEST_ADMIN_TOKEN)).status).toBe(303);
  });
});
