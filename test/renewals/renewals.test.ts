import { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { manualClock, systemClock } from "../../src/clock.js";
import { createLogger } from "../../src/log/logger.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import { createdEvent, idle, serviceEvent, type TestBridge, type TestSandbox } from "../helpers/bridge.js";
import { usePairInTest } from "../helpers/e2e-harness.js";
import { startTestSmtp, type TestSmtp } from "../helpers/smtp.js";
import { waitFor } from "../helpers/wait.js";

const DAY = 86_400_000;
const inDays = (days: number, from = Date.now()) => new Date(from + days * DAY).toISOString().slice(0, 10);

let smtp: TestSmtp | undefined;
afterEach(async () => {
  await smtp?.stop();
  smtp = undefined;
});

const charges = (sb: TestSandbox, op: string) => sb.sandbox.ledger().filter((c) => c.op === op);
const activeService = (bridge: TestBridge, id: string) =>
  waitFor(async () => {
    const s = await bridge.service.services.get(id);
    return s?.status === "active" ? s : undefined;
  }, 10_000, `service ${id} active`);

/**
 * A debug logger that counts the scheduled sweeps it logs (each tick logs one line, "renewal
 * sweep" or "renewal sweep: nothing new due", once the sweep has queued what it found due).
 */
function sweepLog() {
  let sweeps = 0;
  const destination = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      sweeps += chunk.toString().split("\n").filter((l) => l.includes('"msg":"renewal sweep')).length;
      done();
    },
  });
  return { logger: createLogger({ level: "debug", destination, pretty: false }), sweeps: () => sweeps };
}

describe("renewal sweep", () => {
  // A sandbox and bridge per test, not per file: a sweep takes every service of the bridge, and
  // the tests count every renewal the sandbox charged and every job of a kind, so another test's
  // services would be in them. Most also start the bridge their own way (a sweep every second, a
  // manual clock, an SMTP sink, a sandbox without funds).
  const startPair = usePairInTest();

  it("renews a paid licence inside the lead window exactly once while the sweep ticks every second", async () => {
    const log = sweepLog();
    // Lead of 40 days makes a fresh monthly licence due at once; one renewal moves it out of the window.
    const { sb, bridge } = await startPair({ env: { RENEWAL_CRON: "* * * * * *", RENEWAL_LEAD_DAYS: "40" }, logger: log.logger });
    await bridge.send(createdEvent({ id: "r1", ip: "203.0.113.10", next_due_date: inDays(365) }));
    const before = (await activeService(bridge, "r1")).expires_at!;
    await waitFor(async () => (await bridge.service.services.get("r1"))!.expires_at! > before, 10_000, "the renewal recorded");
    // Three more ticks after the renewal was recorded: any of them that found the licence due again queued a second renewal.
    const renewedAt = log.sweeps();
    await waitFor(() => log.sweeps() >= renewedAt + 3, 10_000, "three more sweeps");
    await waitFor(() => idle(bridge.service));
    expect(charges(sb, "renew")).toHaveLength(1);
    expect(charges(sb, "renew")[0]).toMatchObject({ ip: "203.0.113.10", type: "cpanel", months: 1 });
    expect((await bridge.service.services.get("r1"))!.expires_at!).toBeGreaterThan(before + 27 * DAY);
    expect(await bridge.service.queue.list({ kind: "renew" })).toHaveLength(1);
  });

  it("does not renew a suspended, a terminated or an unpaid licence", async () => {
    const { sb, bridge } = await startPair({ env: { RENEWAL_LEAD_DAYS: "40" } });
    const paid = { next_due_date: inDays(365) };
    await bridge.send(createdEvent({ id: "s-susp", ip: "203.0.113.21", ...paid }));
    await bridge.send(createdEvent({ id: "s-term", ip: "203.0.113.22", ...paid }));
    await bridge.send(createdEvent({ id: "s-unpaid", ip: "203.0.113.23" }));
    await bridge.send(createdEvent({ id: "s-paid", ip: "203.0.113.24", ...paid }));
    await bridge.send(serviceEvent("service.suspended", "s-susp"));
    await bridge.send(serviceEvent("service.terminated", "s-term"));
    await waitFor(async () => (await bridge.service.services.get("s-term"))?.status === "terminated" && (await bridge.service.services.get("s-susp"))?.status === "suspended");
    await activeService(bridge, "s-paid");
    await activeService(bridge, "s-unpaid");

    const result = await bridge.service.sweep.sweep();
    expect(result.queued.map((q) => q.service_id)).toEqual(["s-paid"]);
    await waitFor(async () => charges(sb, "renew").length === 1 && await idle(bridge.service));
    expect(charges(sb, "renew").map((c) => c.ip)).toEqual(["203.0.113.24"]);
  });

  it("a renewal whose answer is lost after the upstream committed is not paid twice", async () => {
    const { sb, bridge } = await startPair({ env: { RENEWAL_LEAD_DAYS: "40" } });
    await bridge.send(createdEvent({ id: "lost", next_due_date: inDays(365) }));
    const term = (await activeService(bridge, "lost")).expires_at!;
    sb.sandbox.setFaults({ dropNext: 1 });
    await bridge.service.sweep.sweep();
    await waitFor(async () => (await bridge.service.services.get("lost"))!.expires_at! > term, 10_000, "renewal recorded");
    await waitFor(() => idle(bridge.service));
    expect(charges(sb, "renew")).toHaveLength(1);
    const renewJob = (await bridge.service.queue.list({ kind: "renew" }))[0]!;
    expect(renewJob).toMatchObject({ state: "succeeded", attempts: 2 });
    const history = (await bridge.service.services.history("lost")).map((h) => h.detail ?? "");
    expect(history.some((d) => d.includes("confirmed by the licence list"))).toBe(true);
  });

  it("a renewal whose answer was lost is recorded from the licence list though the service was recorded suspended meanwhile", async () => {
    const clock = manualClock(Date.now());
    const { sb, bridge } = await startPair({ clock, env: { RENEWAL_LEAD_DAYS: "40", RESELLER_SETTLE_SECONDS: "60" } });
    await bridge.send(createdEvent({ id: "lost-then-suspended", next_due_date: inDays(365) }));
    const term = (await activeService(bridge, "lost-then-suspended")).expires_at!;
    await waitFor(() => idle(bridge.service));
    sb.sandbox.setFaults({ dropNext: 1 });
    await bridge.service.sweep.sweep();
    await waitFor(async () => (await bridge.service.queue.list({ kind: "renew" }))[0]?.lastError?.includes("RESELLER_SETTLE_SECONDS"), 10_000, "the renewal to wait out the window");
    // As reconcile records a licence the reseller shows suspended: not through the service's queue.
    await bridge.service.services.change({ serviceId: "lost-then-suspended", patch: { status: "suspended" } });
    clock.advance(61_000);
    await waitFor(async () => (await bridge.service.queue.list({ kind: "renew", state: "succeeded" })).length === 1, 10_000, "the renewal to end");
    // What the lost call bought is recorded, not skipped as "not due": the rule stands before a charge, not before the list is asked.
    expect(charges(sb, "renew")).toHaveLength(1);
    expect((await bridge.service.queue.list({ kind: "renew" }))[0]!.skipped).toBeNull();
    expect((await bridge.service.services.get("lost-then-suspended"))!.expires_at!).toBeGreaterThan(term);
    expect((await bridge.service.services.history("lost-then-suspended")).at(-1)).toMatchObject({ action: "renewed", detail: expect.stringContaining("confirmed by the licence list") });
  });

  it("service.renewed records the payment and renews at once when the licence is already due", async () => {
    const { sb, bridge } = await startPair({ env: { RENEWAL_LEAD_DAYS: "40" } });
    await bridge.send(createdEvent({ id: "pay" }));
    await activeService(bridge, "pay");
    expect((await bridge.service.sweep.sweep()).queued).toEqual([]);
    const res = await bridge.send(serviceEvent("service.renewed", "pay", { service: { next_due_date: inDays(90) } }));
    expect(res.status).toBe(202);
    await waitFor(() => charges(sb, "renew").length === 1, 10_000, "renewal");
    expect(new Date((await bridge.service.services.get("pay"))!.paid_until!).toISOString().slice(0, 10)).toBe(inDays(90));
  });

  it("insufficient balance during a sweep sends one operator alert and heals after funds return", async () => {
    smtp = await startTestSmtp();
    const clock = manualClock(Date.now());
    const { sb, bridge } = await startPair({
      clock,
      env: { RENEWAL_LEAD_DAYS: "40", OPERATOR_EMAIL: "ops@example.com", SMTP_URL: smtp.url, BLOCKED_RETRY_MINUTES: "15" },
    });
    await bridge.send(createdEvent({ id: "broke", next_due_date: inDays(365) }));
    await activeService(bridge, "broke");
    sb.sandbox.setBalance(0);

    for (let tick = 0; tick < 3; tick++) {
      await bridge.service.sweep.sweep();
      await bridge.service.maintenance();
      await waitFor(async () => (await bridge.service.queue.list({ kind: "renew", state: "blocked" })).length === 1, 10_000, "blocked renewal");
      clock.advance(16 * 60_000);
    }
    await waitFor(() => smtp!.messages.some((m) => m.envelope.to.includes("ops@example.com")), 10_000, "alert mail");
    expect(charges(sb, "renew")).toHaveLength(0);

    sb.sandbox.setBalance(1000);
    clock.advance(16 * 60_000);
    await bridge.service.maintenance();
    await waitFor(() => charges(sb, "renew").length === 1, 10_000, "healed renewal");
    await waitFor(() => idle(bridge.service));
    const alertMails = smtp.messages.filter((m) => m.envelope.to.includes("ops@example.com"));
    expect(alertMails).toHaveLength(1);
    expect(alertMails[0]!.raw).toMatch(/balance/i);
    // Resolving follows the job's success, outside its transaction: on PostgreSQL it may land a moment after.
    await waitFor(async () => (await bridge.service.alerts.open()).length === 0, 5_000, "the balance alert to be resolved");
  });

  it("a renewal that has not gone through a day before the term ends alerts the operator once", async () => {
    const clock = manualClock(Date.now());
    const { sb, bridge } = await startPair({ clock, env: { RENEWAL_LEAD_DAYS: "40", OPERATOR_EMAIL: "ops@example.com" } });
    await bridge.send(createdEvent({ id: "risky", next_due_date: inDays(365) }));
    const { expires_at: termEnd } = await activeService(bridge, "risky");
    sb.sandbox.setBalance(0);

    // Two days before the term ends the renewal is tried and blocked: not yet at risk.
    clock.set(termEnd! - 2 * DAY);
    await bridge.service.sweep.sweep();
    await waitFor(async () => (await bridge.service.queue.list({ kind: "renew", state: "blocked" })).length === 1, 10_000, "blocked renewal");
    await bridge.service.maintenance();
    const key = `renewal-at-risk:renew:risky:${termEnd}`;
    expect((await bridge.service.alerts.open()).map((a) => a.key)).not.toContain(key);

    // Half a day before: at risk, one episode (one mail), counted again on the next pass.
    clock.set(termEnd! - DAY / 2);
    await bridge.service.maintenance();
    await bridge.service.maintenance();
    expect((await bridge.service.alerts.open()).filter((a) => a.key === key)).toEqual([expect.objectContaining({ key, count: 2 })]);
    const mails = (await bridge.service.queue.list({ kind: "alert_mail" })).filter((j) => (j.payload as { key: string }).key === key);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.payload).toMatchObject({ subject: expect.stringContaining("renewal of service risky not done") });

    // Topped up, the renewal heals by itself: the episode is over and its alert closes. (The
    // passes above took the blocked renewal back once: it must be blocked again, at the balance
    // of 0, before the clock moves on.)
    await waitFor(async () => (await bridge.service.queue.list({ kind: "renew", state: "blocked" })).length === 1, 10_000, "blocked again");
    sb.sandbox.setBalance(1000);
    clock.advance(16 * 60_000);
    await bridge.service.maintenance();
    await waitFor(() => charges(sb, "renew").length === 1, 10_000, "healed renewal");
    await waitFor(async () => (await bridge.service.alerts.open()).length === 0, 5_000, "every alert resolved");
  });

  it("without OPERATOR_EMAIL an alert is only logged, no mail job is created", async () => {
    const { bridge } = await startPair({ sandbox: { balance: 0 } });
    await bridge.send(createdEvent({ id: "nomail" }));
    await waitFor(async () => (await bridge.service.queue.list({ state: "blocked" })).length === 1);
    // The alert follows the job's blocked state, outside its transaction.
    await waitFor(async () => (await bridge.service.alerts.open()).length > 0, 5_000, "the balance alert");
    expect((await bridge.service.alerts.open()).map((a) => a.key)).toEqual(["balance"]);
    expect(await bridge.service.queue.list({ kind: "alert_mail" })).toEqual([]);
  });
});

describe("the due query", () => {
  it("is a range scan of the (status, expires_at) index", async () => {
    const store = openSqliteStore(":memory:", { clock: systemClock });
    try {
      await store.migrate();
      expect(store.dueQueryPlan().join("\n")).toMatch(/SEARCH services USING INDEX services_due \(status=\? AND expires_at<\?\)/);
    } finally {
      await store.close();
    }
  });
});
