import { expect, it } from "vitest";
import { serviceQueueKey } from "../../src/vocabulary/job-kinds.js";
import type { AuditDraft, IntakeDecision, IntakeItem } from "../../src/store/store.js";
import { describeEachStore } from "../helpers/stores.js";

// The audit trail (issue 26), kept by both stores: an operator's action and its entry commit in
// one transaction, so neither is ever there without the other; the trail pages newest first.

const DAY = 86_400_000;
const LEASE = 10_000;
const alice: AuditDraft = { actor: "alice", action: "job.retry" };

/** An intake that creates the service of every event, for the tests that need services. */
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
        product_id: "12",
        kind: "licence",
        type: "cpanel",
        bundle: null,
        variant: null,
        ip: item.ip!,
        billing_cycle: "monthly",
        months: 1,
        status: "active",
        customer_email: null,
        customer_name: null,
        paid_until: null,
        order_event_id: null,
      },
    },
  };
}

const start = Date.UTC(2026, 0, 1);

describeEachStore("the audit trail on $name", { startAt: start, maxAttempts: 1 }, ({ store, clock }) => {
  const service = async (id: string, n: number) => {
    await store.events.accept("test", [{ webhookId: `w-${id}`, event: { type: "service.created", service: { id } }, queueKey: serviceQueueKey(id), ip: `203.0.113.${n}` }], createAll, () => true);
  };
  /** A job of `serviceId` that ends in `state`. */
  const jobIn = async (state: "failed" | "succeeded", serviceId: string | null = null) => {
    const { id } = await store.jobs.enqueue({ kind: "test", serviceId, queueKey: serviceId ? serviceQueueKey(serviceId) : null });
    const [job] = await store.jobs.claim("w1", 1, LEASE);
    expect(job?.id).toBe(id);
    await store.jobs.finish(job!, "w1", state === "failed" ? { state: "failed", error: "no", code: "job_failed" } : { state: "succeeded" });
    return id;
  };

  it("a retry writes its entry with the job and its service, in the retry's transaction", async () => {
    await service("s1", 1);
    const id = await jobIn("failed", "s1");
    expect(await store.jobs.retry(id, { ...alice, detail: "after the top-up" })).toMatchObject({ id, state: "queued" });
    const { entries, total } = await store.audit.list();
    expect(total).toBe(1);
    expect(entries).toEqual([
      { id: expect.any(Number), at: start, actor: "alice", action: "job.retry", service_id: "s1", job_id: id, outcome: "ok", detail: "after the top-up" },
    ]);
  });

  it("a retry the state does not allow is written as refused, saying why, and changes nothing", async () => {
    const done = await jobIn("succeeded");
    expect(await store.jobs.retry(done, alice)).toBeUndefined();
    expect(await store.jobs.retry(424242, alice)).toBeUndefined();
    expect((await store.jobs.get(done))?.state).toBe("succeeded");
    expect((await store.audit.list()).entries.map((e) => [e.job_id, e.outcome, e.detail])).toEqual([
      [424242, "refused", "no such job"],
      [done, "refused", "the job is succeeded; only failed or blocked jobs can be retried"],
    ]);
  });

  it("a retry whose entry cannot be written does not happen: the job stays failed", async () => {
    const id = await jobIn("failed");
    // The table refuses an empty actor, as it would refuse any write at that moment (a full disk, a lost connection).
    await expect(store.jobs.retry(id, { actor: "", action: "job.retry" })).rejects.toThrow();
    expect((await store.jobs.get(id))?.state).toBe("failed");
    expect((await store.audit.list()).total).toBe(0);
  });

  it("a service change carries its entries: ok with the job it queues; refused alone when the service changed meanwhile", async () => {
    await service("s2", 2);
    const seen = (await store.services.get("s2"))!;
    clock.advance(1_000);
    const { applied, jobIds } = await store.services.change({
      serviceId: "s2",
      ifUpdatedAt: seen.updated_at,
      patch: { status: "suspended" },
      enqueue: [{ kind: "enforce", serviceId: "s2", queueKey: serviceQueueKey("s2") }],
      audit: [{ actor: "bob", action: "reconcile.repair", detail: "recorded suspended" }],
    });
    expect(applied).toBe(true);
    // The same repair again from the old reading: the row moved on, so nothing but the refusal is written.
    const again = await store.services.change({ serviceId: "s2", ifUpdatedAt: seen.updated_at, patch: { status: "active" }, audit: [{ actor: "bob", action: "reconcile.repair" }] });
    expect(again.applied).toBe(false);
    expect((await store.services.get("s2"))?.status).toBe("suspended");
    expect((await store.audit.list({ serviceId: "s2" })).entries.map((e) => [e.actor, e.job_id, e.outcome, e.detail])).toEqual([
      ["bob", null, "refused", "not done: the service changed meanwhile"],
      ["bob", jobIds[0], "ok", "recorded suspended"],
    ]);
  });

  it("a change whose entry cannot be written is not made", async () => {
    await service("s3", 3);
    await expect(store.services.change({ serviceId: "s3", patch: { status: "suspended" }, audit: [{ actor: "", action: "x" }] })).rejects.toThrow();
    expect((await store.services.get("s3"))?.status).toBe("active");
  });

  it("an operator's sweep writes an entry per renewal it queued, none for one queued before", async () => {
    await service("due", 4);
    await store.services.change({ serviceId: "due", patch: { expires_at: start + 2 * DAY, paid_until: start + 40 * DAY } });
    const renewal = (d: { service_id: string; expires_at: number }) => ({ kind: "renew", serviceId: d.service_id, uniqueKey: `renew:${d.service_id}:${d.expires_at}` });
    const [first] = await store.renewals.sweep(7 * DAY, renewal, undefined, { actor: "carol", action: "renew.due" });
    await store.renewals.sweep(7 * DAY, renewal, undefined, { actor: "carol", action: "renew.due" });
    expect((await store.audit.list()).entries.map((e) => [e.actor, e.service_id, e.job_id, e.outcome])).toEqual([["carol", "due", first!.id, "ok"]]);
  });

  it("keeps every text of an entry within its bound, marking what it cut, whichever operation writes it", async () => {
    // The ways in refuse an overlong id with 422 before this; the trail bounds what reaches it anyway.
    await store.audit.record({ actor: "a".repeat(500), action: "b".repeat(500), service_id: "s".repeat(6000), outcome: "refused", detail: "d".repeat(100_000) });
    await store.services.resetIpChanges("t".repeat(6000), alice);
    const { entries } = await store.audit.list();
    expect(entries.map((e) => [e.actor.length, e.action.length, e.service_id?.length ?? null, e.detail!.length])).toEqual([
      [5, 9, null, 15],
      [200, 64, 64, 2000],
    ]);
    // An operation on a service the bridge does not know writes no id at all (what a client typed may be anything).
    expect(entries[0]!.service_id).toBeNull();
    expect(entries[1]).toMatchObject({ actor: `${"a".repeat(199)}…`, service_id: `${"s".repeat(63)}…`, detail: `${"d".repeat(1999)}…` });
  });

  it("an entry whose texts are within their bounds is kept as it is", async () => {
    const draft = { actor: "a".repeat(200), action: "b".repeat(64), service_id: "s".repeat(64), outcome: "ok" as const, detail: "d".repeat(2000) };
    await store.audit.record(draft);
    expect((await store.audit.list()).entries).toEqual([expect.objectContaining(draft)]);
  });

  it("pages newest first by cursor, and filters by actor, action, service, job and time; total counts every match", async () => {
    for (let i = 0; i < 5; i++) {
      await store.audit.record({ actor: i % 2 ? "bob" : "alice", action: i < 3 ? "job.retry" : "reconcile.fix", service_id: `s${i}`, job_id: i, outcome: "ok" });
      clock.advance(DAY);
    }
    const all = await store.audit.list();
    expect(all.total).toBe(5);
    expect(all.entries.map((e) => e.job_id)).toEqual([4, 3, 2, 1, 0]);
    const first = await store.audit.list({ limit: 2 });
    expect(first.entries.map((e) => e.job_id)).toEqual([4, 3]);
    const second = await store.audit.list({ limit: 2, beforeId: first.entries.at(-1)!.id });
    expect(second.entries.map((e) => e.job_id)).toEqual([2, 1]);
    expect(second.total).toBe(5);
    expect((await store.audit.list({ actor: "alice" })).entries.map((e) => e.job_id)).toEqual([4, 2, 0]);
    expect((await store.audit.list({ actor: "alice", action: "job.retry" })).total).toBe(2);
    expect((await store.audit.list({ serviceId: "s3" })).entries.map((e) => e.actor)).toEqual(["bob"]);
    expect((await store.audit.list({ jobId: 1 })).entries.map((e) => e.service_id)).toEqual(["s1"]);
    expect((await store.audit.list({ since: start + DAY, until: start + 3 * DAY })).entries.map((e) => e.job_id)).toEqual([2, 1]);
    expect((await store.audit.list({ outcome: "refused" })).total).toBe(0);
    // The filters as the admin API, the console and the CLI combine them with a cursor.
    expect(await store.audit.list({ action: "reconcile.fix" })).toMatchObject({ total: 2, entries: [{ job_id: 4 }, { job_id: 3 }] });
    expect(await store.audit.list({ action: "job.retry", serviceId: "s1" })).toMatchObject({ total: 1, entries: [{ actor: "bob" }] });
    const s2 = (await store.audit.list({ serviceId: "s2" })).entries[0]!;
    expect(await store.audit.list({ serviceId: "s2", beforeId: s2.id })).toEqual({ entries: [], total: 1 });
    expect((await store.audit.list({ serviceId: "s2", beforeId: s2.id + 1 })).entries.map((e) => e.job_id)).toEqual([2]);
  });
});
