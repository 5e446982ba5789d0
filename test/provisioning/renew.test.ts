import { afterEach, describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { startTestBridge, startTestSandbox, uniqueIp, type TestBridge, type TestSandbox } from "../helpers/bridge.js";
import { usePairPerFile } from "../helpers/e2e-harness.js";
import { tempDirs } from "../helpers/temp-dirs.js";
import { TEST_STORE } from "../helpers/test-store.js";

/**
 * `renew` repeated (service-contract.md section 8: "Repeating a call is safe"): a renewal without
 * next_due_date adds a cycle, so the same call retried (after a timeout, or to learn the outcome
 * of a 202) must answer the first one's outcome instead of adding another.
 */

const DAY = 86_400_000;

let sb: TestSandbox | undefined;
const bridges: TestBridge[] = [];
const dirs = tempDirs("lb-renew-");
afterEach(async () => {
  for (const b of bridges.splice(0)) await b.close();
  await sb?.close();
  sb = undefined;
  dirs.removeAll();
});

/** A bridge of the test's own, closed after it: on `sandbox`, or on a sandbox of the test's own. */
const start = async (options: Parameters<typeof startTestBridge>[1] = {}, sandbox?: TestSandbox) => {
  const bridge = await startTestBridge(sandbox ?? (sb ??= await startTestSandbox()), options);
  bridges.push(bridge);
  return bridge;
};

/** A monthly licence, active; returns its service id and the paid-until the order left. */
const ordered = async (bridge: TestBridge) => {
  const service_identifier = `r-${Math.random().toString(36).slice(2, 10)}`;
  const res = await bridge.provision("create", { service_identifier, package_identifier: "12", ip: uniqueIp() });
  expect(res.status).toBe(200);
  return { service_identifier, paidUntil: res.body.paid_until as string };
};

/**
 * `months` terms later, a month at a time as each renewal adds one: a day the next month lacks is
 * its last day (29 Dec, 29 Jan, then 28 Feb; not 1 March, where adding two months at once lands).
 */
const monthAfter = (iso: string, months = 1) => {
  const d = new Date(iso);
  for (let i = 0; i < months; i++) {
    const day = d.getUTCDate();
    d.setUTCDate(1);
    d.setUTCMonth(d.getUTCMonth() + 1);
    const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
    d.setUTCDate(Math.min(day, lastDay));
  }
  return d.toISOString();
};

const payments = async (bridge: TestBridge, serviceId: string) => (await bridge.service.queue.list({ serviceId, kind: "record_payment" })).length;
const received = async (bridge: TestBridge, serviceId: string) =>
  (await bridge.service.services.history(serviceId)).filter((h) => h.action === "received service.renewed").length;

describe("provisioning API: renew without next_due_date, repeated", () => {
  // Each test renews a service of its own (`ordered` gives it a new id and IP), so most share one
  // sandbox and bridge; a restart and a moved clock need a bridge of their own (`start`).
  const pair = usePairPerFile();

  it("the same renew sent three times adds one cycle, answers the same each time, and records one event", async () => {
    const { bridge } = pair();
    const { service_identifier, paidUntil } = await ordered(bridge);
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await bridge.provision("renew", { service_identifier }));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers.map((a) => a.body.paid_until)).toEqual(Array(3).fill(monthAfter(paidUntil)));
    expect(await payments(bridge, service_identifier)).toBe(1);
    expect(await received(bridge, service_identifier)).toBe(1);
  });

  it("three at once (a panel retrying while its first call is still open) add one cycle", async () => {
    const { bridge } = pair();
    const { service_identifier, paidUntil } = await ordered(bridge);
    const answers = await Promise.all([0, 1, 2].map(() => bridge.provision("renew", { service_identifier }, { as: "json" })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect((await bridge.service.services.get(service_identifier))?.paid_until).toBe(Date.parse(monthAfter(paidUntil)));
    expect(await payments(bridge, service_identifier)).toBe(1);
  });

  it("a restarted bridge on the same database still answers the repeat with the first renewal", async () => {
    const dir = dirs.make();
    const first = await start({ dir });
    const { service_identifier, paidUntil } = await ordered(first);
    expect((await first.provision("renew", { service_identifier })).body.paid_until).toBe(monthAfter(paidUntil));
    await first.close();
    bridges.splice(bridges.indexOf(first), 1);

    const second = await start({ dir, env: first.env });
    const again = await second.provision("renew", { service_identifier });
    expect(again.status).toBe(200);
    expect(again.body.paid_until).toBe(monthAfter(paidUntil));
    expect(await payments(second, service_identifier)).toBe(1);
  });

  // Several instances share a database on PostgreSQL only; on SQLite the one instance gets the calls at once.
  it("instances given the same renew at once (two on PostgreSQL, one on SQLite) add one cycle", async () => {
    const { sb: shared, bridge: a } = pair();
    const b = TEST_STORE === "postgres" ? await start({ env: a.env }, shared) : a;
    const { service_identifier, paidUntil } = await ordered(a);
    const answers = await Promise.all([a, b, a, b].map((x) => x.provision("renew", { service_identifier })));
    expect(answers.map((x) => x.status)).toEqual([200, 200, 200, 200]);
    expect((await a.service.services.get(service_identifier))?.paid_until).toBe(Date.parse(monthAfter(paidUntil)));
    expect(await payments(a, service_identifier)).toBe(1);
  });

  it("a renewal made days after the last one is a new payment and adds its cycle", async () => {
    // The store's clock says the order and the first renewal were two days ago.
    const clock = manualClock(Date.now() - 2 * DAY);
    const bridge = await start({ clock });
    const { service_identifier, paidUntil } = await ordered(bridge);
    expect((await bridge.provision("renew", { service_identifier })).body.paid_until).toBe(monthAfter(paidUntil));
    clock.set(Date.now());
    const next = await bridge.provision("renew", { service_identifier });
    expect(next.status).toBe(200);
    expect(next.body.paid_until).toBe(monthAfter(paidUntil, 2));
    expect(await payments(bridge, service_identifier)).toBe(2);
  });

  it("a renew with next_due_date is idempotent by its date, and a dateless one after it is a payment of its own", async () => {
    const { bridge } = pair();
    const { service_identifier } = await ordered(bridge);
    for (let i = 0; i < 2; i++) {
      const res = await bridge.provision("renew", { service_identifier, next_due_date: "2031-03-15" });
      expect(res.body).toMatchObject({ success: true, paid_until: "2031-03-15T00:00:00.000Z" });
    }
    const dateless = await bridge.provision("renew", { service_identifier });
    expect(dateless.body.paid_until).toBe("2031-04-15T00:00:00.000Z");
  });
});
