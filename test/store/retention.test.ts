import { expect, it } from "vitest";
import { prune } from "../../src/retention/retention.js";
import { PRUNED_PAYLOAD, type IntakeDecision, type IntakeItem, type NewJob, type NewService, type ServicePatch, type StoredEvent } from "../../src/store/store.js";
import { describeEachStore } from "../helpers/stores.js";

// What RETENTION_DAYS lets go, and what it never touches, on both stores: the rows are written
// through the store's own operations, the clock is moved, nothing sleeps.

const DAY = 86_400_000;
const WORKER = "w1";

describeEachStore("retention on $name", { maxAttempts: 3 }, ({ store, clock }) => {
  const days = 90;
  const pruneNow = (o: { dryRun?: boolean; batchSize?: number } = {}) => prune({ store, clock, days, batchSize: o.batchSize }, o);

  /** Enqueues `job`, claims it and ends it as told (or leaves it running); returns its id. */
  async function jobThat(job: NewJob, end: "succeeded" | "blocked" | "failed" | "running", intent?: unknown): Promise<number> {
    const { id } = await store.jobs.enqueue(job);
    const claimed = await store.jobs.claim(WORKER, 50, 60_000);
    const mine = claimed.find((j) => j.id === id);
    if (!mine) throw new Error(`job ${id} was not claimed`);
    if (intent !== undefined) expect(await store.jobs.setIntent(id, WORKER, intent, true)).toBe(true);
    if (end === "succeeded") await store.jobs.finish(mine, WORKER, { state: "succeeded" });
    if (end === "blocked" || end === "failed") await store.jobs.finish(mine, WORKER, { state: end, error: "stopped", code: null });
    return id;
  }

  it("deletes old succeeded jobs in batches and keeps unfinished ones, their charge intents, and a service's two latest payments", async () => {
    const done = [];
    for (let i = 0; i < 5; i++) done.push(await jobThat({ kind: "mail_install", queueKey: `q${i}` }, "succeeded"));
    const blocked = await jobThat({ kind: "register", serviceId: "s1", queueKey: "svc:s1" }, "blocked", { op: "register", ip: "203.0.113.1" });
    const running = await jobThat({ kind: "renew", serviceId: "s2", queueKey: "svc:s2" }, "running", { op: "renew", ip: "203.0.113.2" });
    const failed = await jobThat({ kind: "suspend", serviceId: "s3", queueKey: "svc:s3" }, "failed");
    const payments = [];
    for (let i = 0; i < 3; i++) payments.push(await jobThat({ kind: "record_payment", serviceId: "s4", queueKey: "svc:s4", payload: { next_due_date: null } }, "succeeded"));
    await store.jobs.heartbeat(WORKER, 200 * DAY);

    // Younger than RETENTION_DAYS: nothing goes.
    clock.advance(89 * DAY);
    expect(await pruneNow()).toMatchObject({ jobs: 0, event_payloads: 0, mails: 0 });

    clock.advance(2 * DAY);
    const dry = await pruneNow({ dryRun: true });
    expect(dry).toMatchObject({ dry_run: true, retention_days: 90, jobs: 6, event_payloads: 0, mails: 0, outbox_files: 0 });
    expect((await store.jobs.list({ limit: 100 })).length).toBe(11);

    const wet = await pruneNow({ batchSize: 2 });
    expect(wet).toMatchObject({ dry_run: false, jobs: 6 });
    const left = await store.jobs.list({ limit: 100 });
    expect(left.map((j) => j.id).sort((a, b) => a - b)).toEqual([blocked, running, failed, payments[1], payments[2]]);
    expect(left.find((j) => j.id === blocked)).toMatchObject({ state: "blocked", intent: { op: "register", ip: "203.0.113.1" } });
    expect(left.find((j) => j.id === running)).toMatchObject({ state: "running", intent: { op: "renew", ip: "203.0.113.2" } });
    for (const id of done) expect(await store.jobs.get(id)).toBeUndefined();

    expect(await pruneNow()).toMatchObject({ jobs: 0 });
  });

  it("deletes old cancelled jobs as it deletes succeeded ones, counting from the cancel", async () => {
    const blocked = await jobThat({ kind: "renew", serviceId: "s5", queueKey: "svc:s5" }, "blocked");
    const failed = await jobThat({ kind: "suspend", serviceId: "s6", queueKey: "svc:s6" }, "failed");
    clock.advance(60 * DAY);
    expect(await store.jobs.cancel(blocked, { actor: "otto", action: "job.cancel" })).toMatchObject({ cancelled: { id: blocked } });
    // Created 91 days ago, but cancelled 31: kept. The failed job is kept whatever its age.
    clock.advance(31 * DAY);
    expect(await pruneNow({ dryRun: true })).toMatchObject({ jobs: 0 });
    clock.advance(60 * DAY);
    expect(await pruneNow()).toMatchObject({ jobs: 1 });
    expect(await store.jobs.get(blocked)).toBeUndefined();
    expect((await store.jobs.get(failed))?.state).toBe("failed");
  });

  it("empties processed events' payloads, keeping every event (its webhook id, its history), and deletes sent mail records whose job is done", async () => {
    const accept = (webhookId: string, serviceId: string, outcome: "applied" | null, job?: NewJob) =>
      store.events.accept(
        "billing",
        [{ webhookId, event: { type: "service.renewed", service: { id: serviceId } }, queueKey: `svc:${serviceId}`, ip: undefined } satisfies IntakeItem<StoredEvent>],
        (): IntakeDecision<string> => ({
          write: true,
          result: "ok",
          event: { type: "service.renewed", serviceId, payload: JSON.stringify({ secret: "customer data" }), outcome, detail: null },
          ...(job ? { job } : {}),
        }),
        () => true,
      );
    const processed = (await accept("wh-1", "s1", "applied")).items[0] as { eventId: string };
    const waiting = (await accept("wh-2", "s1", null, { kind: "renew", serviceId: "s1", queueKey: "svc:s1" })).items[0] as { eventId: string; jobId: number };
    // Processed, but a job of its own is still unfinished (blocked): its payload stays.
    const stuck = (await accept("wh-3", "s2", "applied", { kind: "record_payment", serviceId: "s2", queueKey: "svc:s2" })).items[0] as { eventId: string; jobId: number };
    await store.jobs.finish({ ...(await store.jobs.claim(WORKER, 10, 60_000)).find((j) => j.id === stuck.jobId)!, maxAttempts: 3 }, WORKER, { state: "blocked", error: "no", code: null });

    const mailDone = await jobThat({ kind: "mail_install", queueKey: "m1" }, "succeeded");
    const mailBlocked = await jobThat({ kind: "mail_install", queueKey: "m2" }, "blocked");
    const mail = (key: string, jobId: number) => store.mails.begin({ mail_key: key, kind: "mail_install", event_id: null, job_id: jobId, service_id: "s1", to_address: "a@example.com", subject: "s", message_id: `<${key}@x>` });
    await mail("sent-done", mailDone);
    await mail("sent-blocked", mailBlocked);
    await mail("sending", mailDone);
    await store.services.change({ serviceId: "s1", mailSent: "sent-done" });
    await store.services.change({ serviceId: "s1", mailSent: "sent-blocked" });
    const historyBefore = await store.services.history("s1");

    clock.advance(91 * DAY);
    expect(await pruneNow({ dryRun: true })).toMatchObject({ event_payloads: 1, mails: 1 });
    expect(await pruneNow()).toMatchObject({ event_payloads: 1, mails: 1 });

    expect((await store.events.get(processed.eventId))?.payload).toBe(PRUNED_PAYLOAD);
    expect((await store.events.get(waiting.eventId))?.payload).toContain("customer data");
    expect((await store.events.get(stuck.eventId))?.payload).toContain("customer data");
    expect((await store.counts()).events).toBe(3);
    expect(await store.services.history("s1")).toEqual(historyBefore);
    expect(await store.mails.get("sent-done")).toBeUndefined();
    expect(await store.mails.get("sent-blocked")).toMatchObject({ state: "sent" });
    expect(await store.mails.get("sending")).toMatchObject({ state: "sending" });

    // The same delivery again is still a duplicate: the event's row and webhook id are kept.
    expect((await accept("wh-1", "s1", "applied")).items[0]).toEqual({ duplicate: processed.eventId, type: "service.renewed" });
    expect(await pruneNow()).toMatchObject({ jobs: 0, event_payloads: 0, mails: 0 });
  });

  it("keeps the key of every event a terminated service's prune deletes: the same delivery is then a duplicate, with its event's id and type, whatever is decided", async () => {
    /** One event of service t1 from `source`, processed; `write: false` is a decision that refuses it. */
    const deliver = (source: string, webhookId: string, type: string, o: { write?: boolean; order?: { insert?: NewService; update?: ServicePatch } } = {}) =>
      store.events.accept(
        source,
        [{ webhookId, event: { type, service: { id: "t1" } }, queueKey: "svc:t1", ip: undefined } satisfies IntakeItem<StoredEvent>],
        (): IntakeDecision<string> =>
          o.write === false
            ? { write: false, result: "refused" }
            : { write: true, result: "new", event: { type, serviceId: "t1", payload: "{}", outcome: "applied", detail: null }, ...(o.order ? { order: o.order } : {}) },
        () => true,
      );
    const row: NewService = {
      service_id: "t1", product_id: "12", kind: "licence", type: "cpanel", bundle: null, variant: null, ip: "203.0.113.7",
      billing_cycle: "monthly", months: 1, status: "terminated", customer_email: null, customer_name: null, paid_until: null, order_event_id: null,
    };
    const order = (await deliver("billing", "order-t1", "service.created", { order: { insert: row } })).items[0] as { eventId: string };
    const end = (await deliver("hostbill", "end-t1", "service.terminated")).items[0] as { eventId: string };

    clock.advance(61 * DAY);
    const pruneRecords = (dryRun: boolean) => prune({ store, clock, days, terminatedDays: 60 }, { dryRun });
    expect(await pruneRecords(true)).toMatchObject({ terminated_services: 1 });
    expect(await pruneRecords(false)).toMatchObject({ terminated_services: 1 });
    expect(await store.events.get(order.eventId)).toBeUndefined();
    expect((await store.counts()).events).toBe(0);
    expect(await pruneRecords(true)).toMatchObject({ terminated_services: 0 });

    // Decided anew (a terminated service ordered again writes), or refused: a duplicate either way, and nothing stored.
    expect((await deliver("billing", "order-t1", "service.created", { order: { update: { status: "pending" } } })).items[0]).toEqual({ duplicate: order.eventId, type: "service.created" });
    expect((await deliver("hostbill", "end-t1", "service.suspended", { write: false })).items[0]).toEqual({ duplicate: end.eventId, type: "service.terminated" });
    expect((await store.counts()).events).toBe(0);
    // The key is the source's: another panel's delivery of the same id is new.
    expect((await deliver("upmind", "order-t1", "service.renewed")).items[0]).toMatchObject({ result: "new" });
    expect((await store.counts()).events).toBe(1);
  });

  it("deletes audit entries older than AUDIT_RETENTION_DAYS in batches, keeping younger ones; the dry run counts them", async () => {
    const entry = (action: string) => store.audit.record({ actor: "alice", action, service_id: "s1", outcome: "ok" });
    for (let i = 0; i < 5; i++) await entry(`old.${i}`);
    clock.advance(200 * DAY);
    await entry("young");
    const pruneAudit = (o: { dryRun?: boolean; auditDays?: number } = {}) => prune({ store, clock, days, auditDays: o.auditDays ?? 365, batchSize: 2 }, o);

    clock.advance(165 * DAY);
    expect(await pruneAudit()).toMatchObject({ audit_retention_days: 365, audit_entries: 0 });
    clock.advance(1 * DAY);
    expect(await pruneAudit({ dryRun: true })).toMatchObject({ dry_run: true, audit_entries: 5 });
    expect((await store.audit.list()).total).toBe(6);
    expect(await pruneAudit()).toMatchObject({ dry_run: false, audit_retention_days: 365, audit_before: new Date(clock.now() - 365 * DAY).toISOString(), audit_entries: 5 });
    expect((await store.audit.list()).entries.map((e) => e.action)).toEqual(["young"]);
    // RETENTION_DAYS (90) is not the audit trail's: without AUDIT_RETENTION_DAYS it is kept.
    clock.advance(400 * DAY);
    expect(await prune({ store, clock, days }, {})).toMatchObject({ audit_retention_days: null, audit_entries: 0 });
    expect((await store.audit.list()).total).toBe(1);
  });
});
