import { describe, expect, it } from "vitest";
import { serviceQueueKey } from "../../src/vocabulary/job-kinds.js";
import type { AuditDraft, IntakeDecision, IntakeItem, NewJob } from "../../src/store/store.js";
import { describeEachStore } from "../helpers/stores.js";

// The operators' actions that are one store operation each (issue 26), on both stores: a job
// cancelled, a mail queued again, the IP-change counter reset, each written in one transaction
// with its audit entry, and refused (the refusal audited alone) when it does not apply.

const LEASE = 10_000;
const WORKER = "w1";
const otto = (action: string): AuditDraft => ({ actor: "otto", action });

/** An intake that creates the service of every event (active, with an e-mail unless the webhook id says "no-mail"). */
function createAll(item: IntakeItem, view: { existing: unknown }): IntakeDecision<string> {
  const id = item.event.service.id;
  if (view.existing) return { write: false, result: "exists" };
  return {
    write: true,
    result: "created",
    event: { type: "service.created", serviceId: id, payload: "{}", outcome: null, detail: null },
    order: {
      insert: {
        service_id: id,
        product_id: "13",
        kind: "licence",
        type: "litespeed",
        bundle: null,
        variant: "litespeed4",
        ip: item.ip!,
        billing_cycle: "monthly",
        months: 1,
        status: item.webhookId.includes("pending") ? "pending" : "active",
        customer_email: item.webhookId.includes("no-mail") ? null : "ann@example.com",
        customer_name: "Ann",
        paid_until: null,
        order_event_id: null,
      },
    },
  };
}

const start = Date.UTC(2026, 0, 1);

describeEachStore("operators' actions on $name", { startAt: start, maxAttempts: 1 }, ({ store, clock }) => {
  let ipSeq = 0;
  const service = async (id: string, kind = "") => {
    await store.events.accept(
      "test",
      [{ webhookId: `w-${id}-${kind}`, event: { type: "service.created", service: { id } }, queueKey: serviceQueueKey(id), ip: `203.0.113.${++ipSeq}` }],
      createAll,
      () => true,
    );
  };

  /** A renewal event of `serviceId`, with `outcome` recorded already (or none yet). */
  const eventOf = async (serviceId: string, outcome: "failed" | null) => {
    const decide = (): IntakeDecision<string> => ({
      write: true,
      result: "ok",
      event: { type: "service.renewed", serviceId, payload: "{}", outcome, detail: outcome ? "stopped" : null },
    });
    const item = { webhookId: `renewal-${serviceId}`, event: { type: "service.renewed", service: { id: serviceId } }, queueKey: serviceQueueKey(serviceId), ip: undefined };
    return (await store.events.accept("test", [item], decide, () => true)).items[0] as { eventId: string };
  };

  /** A job of `serviceId`'s queue (with an event when `eventId` is given), claimed and ended as told; `intent` recorded first. */
  async function jobThat(serviceId: string, end: "blocked" | "failed" | "succeeded" | "running" | "queued", o: { intent?: unknown; eventId?: string; uniqueKey?: string } = {}) {
    const job: NewJob = { kind: "renew", serviceId, queueKey: serviceQueueKey(serviceId), eventId: o.eventId ?? null, uniqueKey: o.uniqueKey ?? null };
    const { id } = await store.jobs.enqueue(job);
    if (end === "queued") return id;
    const claimed = (await store.jobs.claim(WORKER, 10, LEASE)).find((j) => j.id === id);
    if (!claimed) throw new Error(`job ${id} was not claimed`);
    if (o.intent !== undefined) expect(await store.jobs.setIntent(id, WORKER, o.intent, true)).toBe(true);
    if (end === "succeeded") await store.jobs.finish(claimed, WORKER, { state: "succeeded" });
    if (end === "blocked" || end === "failed") await store.jobs.finish(claimed, WORKER, { state: end, error: "no balance", code: "insufficient_balance" });
    return id;
  }

  describe("cancelling a job", () => {
    it("ends a blocked job cancelled, with its entry, its service's history and its event's outcome, and lets the next job of its queue run", async () => {
      await service("s1");
      const order = await eventOf("s1", null);
      const blocked = await jobThat("s1", "blocked", { eventId: order.eventId, uniqueKey: "renew:s1:term" });
      const next = await jobThat("s1", "queued");
      // The blocked job holds its queue.
      expect(await store.jobs.claim(WORKER, 10, LEASE)).toEqual([]);

      const r = await store.jobs.cancel(blocked, otto("job.cancel"));
      expect(r).toEqual({ cancelled: expect.objectContaining({ id: blocked, state: "cancelled", uniqueKey: null, lastError: "no balance" }) });

      expect((await store.jobs.claim(WORKER, 10, LEASE)).map((j) => j.id)).toEqual([next]);
      expect((await store.jobs.counts()).cancelled).toBe(1);
      expect((await store.jobs.page({ state: "cancelled", limit: 10 })).items.map((j) => j.id)).toEqual([blocked]);
      expect((await store.audit.list()).entries).toEqual([
        expect.objectContaining({ actor: "otto", action: "job.cancel", job_id: blocked, service_id: "s1", outcome: "ok", at: start }),
      ]);
      expect((await store.services.history("s1")).find((h) => h.action === "job cancelled")).toMatchObject({
        job_id: blocked,
        event_id: order.eventId,
        detail: `renew job ${blocked} cancelled by otto; it was blocked: no balance`,
      });
      expect(await store.events.get(order.eventId)).toMatchObject({ outcome: "skipped", detail: `renew job ${blocked} cancelled by otto` });
      // The unique key is given up: the same work may be queued again.
      expect((await store.jobs.enqueue({ kind: "renew", serviceId: "s1", uniqueKey: "renew:s1:term" })).created).toBe(true);
    });

    it("cancels a failed job and keeps the outcome its event already has", async () => {
      await service("s2");
      const event = await eventOf("s2", "failed");
      const failed = await jobThat("s2", "failed", { eventId: event.eventId });
      expect(await store.jobs.cancel(failed, otto("job.cancel"))).toEqual({ cancelled: expect.objectContaining({ id: failed, state: "cancelled" }) });
      expect(await store.events.get(event.eventId)).toMatchObject({ outcome: "failed", detail: "stopped" });
    });

    it.each(["queued", "running", "succeeded"] as const)("refuses a %s job, audited as refused, the job untouched", async (state) => {
      await service("s3");
      const id = await jobThat("s3", state);
      const before = await store.jobs.get(id);
      const r = await store.jobs.cancel(id, otto("job.cancel"));
      expect(r).toEqual({ refused: "not_stopped", job: expect.objectContaining({ id, state }) });
      expect(await store.jobs.get(id)).toEqual(before);
      expect((await store.audit.list()).entries).toEqual([
        expect.objectContaining({ action: "job.cancel", job_id: id, service_id: "s3", outcome: "refused", detail: `job ${id} is ${state}; only failed or blocked jobs can be cancelled` }),
      ]);
      expect((await store.services.history("s3")).some((h) => h.action === "job cancelled")).toBe(false);
    });

    it("refuses a blocked job that recorded a charge intent: it may have bought something, so only a retry or a reconcile can tell", async () => {
      await service("s4");
      const id = await jobThat("s4", "blocked", { intent: { op: "renew", ip: "203.0.113.4" } });
      const r = await store.jobs.cancel(id, otto("job.cancel"));
      expect(r).toEqual({ refused: "charge_intent", job: expect.objectContaining({ id, state: "blocked" }) });
      expect((await store.jobs.get(id))?.state).toBe("blocked");
      const [entry] = (await store.audit.list()).entries;
      expect(entry).toMatchObject({ outcome: "refused", job_id: id });
      expect(entry!.detail).toContain("charge intent");
      // Still holding its queue.
      await jobThat("s4", "queued");
      expect(await store.jobs.claim(WORKER, 10, LEASE)).toEqual([]);
    });

    it("refuses a job that does not exist, audited as refused", async () => {
      expect(await store.jobs.cancel(424242, otto("job.cancel"))).toEqual({ refused: "unknown_job", job: undefined });
      expect((await store.audit.list()).entries).toEqual([expect.objectContaining({ job_id: 424242, outcome: "refused", detail: "no such job" })]);
    });
  });

  describe("resetting the IP-change counter", () => {
    it("sets it to 0 with a history entry and an audit entry, in one go", async () => {
      await service("r1");
      await store.services.change({ serviceId: "r1", patch: { ip_changes: 3 } });
      clock.advance(1_000);
      const svc = await store.services.resetIpChanges("r1", otto("service.reset_ip_changes"));
      expect(svc).toMatchObject({ service_id: "r1", ip_changes: 0, updated_at: start + 1_000 });
      expect((await store.services.get("r1"))?.ip_changes).toBe(0);
      expect((await store.services.history("r1")).at(-1)).toMatchObject({ at: start + 1_000, action: "IP changes reset", detail: "IP-change counter reset by otto (from 3 to 0)" });
      expect((await store.audit.list()).entries).toEqual([
        expect.objectContaining({ actor: "otto", action: "service.reset_ip_changes", service_id: "r1", job_id: null, outcome: "ok", at: start + 1_000 }),
      ]);
    });

    it("writes only a refused entry, without the id, for a service the bridge does not know", async () => {
      expect(await store.services.resetIpChanges("nobody", otto("service.reset_ip_changes"))).toBeUndefined();
      expect((await store.audit.list()).entries).toEqual([expect.objectContaining({ service_id: null, outcome: "refused", detail: "no such service" })]);
      expect(await store.services.history("nobody")).toEqual([]);
    });
  });

  describe("queueing a job for an operator", () => {
    const request = (uniqueKey: string, refuse: (s: { status: string }) => { message: string } | undefined = () => undefined) => ({
      job: { kind: "mail_install", serviceId: "m1", uniqueKey } satisfies NewJob,
      history: { action: "install mail resend", detail: "asked by otto" },
      audit: otto("service.resend_install_mail"),
      refuse,
    });

    it("queues the job with its history and audit entries; the same key again is that job, and writes nothing more", async () => {
      await service("m1");
      const first = await store.services.queueForOperator("m1", request("resend:m1:a"));
      expect(first).toMatchObject({ status: "queued", created: true, service: expect.objectContaining({ service_id: "m1" }) });
      const jobId = (first as { jobId: number }).jobId;
      expect(await store.jobs.get(jobId)).toMatchObject({ kind: "mail_install", serviceId: "m1", state: "queued" });
      expect((await store.services.history("m1")).at(-1)).toMatchObject({ action: "install mail resend", job_id: jobId });

      expect(await store.services.queueForOperator("m1", request("resend:m1:a"))).toMatchObject({ status: "queued", jobId, created: false });
      expect((await store.services.history("m1")).filter((h) => h.action === "install mail resend")).toHaveLength(1);
      expect((await store.audit.list()).entries).toEqual([expect.objectContaining({ action: "service.resend_install_mail", service_id: "m1", job_id: jobId, outcome: "ok" })]);

      // Another request: another job.
      const second = await store.services.queueForOperator("m1", request("resend:m1:b"));
      expect(second).toMatchObject({ status: "queued", created: true });
      expect((second as { jobId: number }).jobId).not.toBe(jobId);
    });

    it("writes only the refusal when the rule refuses the service as it is, or there is no such service", async () => {
      await service("m1", "pending");
      const refused = await store.services.queueForOperator("m1", request("resend:m1:c", (s) => (s.status !== "active" ? { message: `it is ${s.status}` } : undefined)));
      expect(refused).toEqual({ status: "refused", refusal: { message: "it is pending" } });
      expect(await store.services.queueForOperator("nobody", request("resend:nobody"))).toEqual({ status: "unknown_service" });
      expect((await store.jobs.list()).filter((j) => j.kind === "mail_install")).toEqual([]);
      expect((await store.audit.list()).entries.map((e) => [e.service_id, e.outcome, e.detail])).toEqual([
        [null, "refused", "no such service"],
        ["m1", "refused", "it is pending"],
      ]);
    });
  });
});
