import { expect, it } from "vitest";
import type { Job } from "../../src/vocabulary/jobs.js";
import type { NewJob } from "../../src/store/store.js";
import { describeEachStore } from "../helpers/stores.js";

// The job queue's promises, written once and kept by both stores: SQLite on a temp file and
// PostgreSQL on a fresh database, each with a clock the tests move.

const LEASE = 10_000;
const ids = (jobs: Job[]) => jobs.map((j) => j.id);

describeEachStore("the job queue on $name", { maxAttempts: 3 }, ({ store, clock }) => {
  const enqueue = async (job: Partial<NewJob> = {}) => (await store.jobs.enqueue({ kind: "test", ...job })).id;
  const claimIds = async (worker = "w1", limit = 10) => ids(await store.jobs.claim(worker, limit, LEASE));
  const claimOne = async (worker = "w1") => {
    const [job] = await store.jobs.claim(worker, 1, LEASE);
    if (!job) throw new Error("nothing to claim");
    return job;
  };

  it("claims due jobs by run_at, then by id, and leaves the rest for later", async () => {
    const later = await enqueue({ delayMs: 1_000 });
    const first = await enqueue();
    const second = await enqueue();
    expect(await claimIds("w1", 10)).toEqual([first, second]);
    clock.advance(1_000);
    expect(await claimIds("w1", 10)).toEqual([later]);
  });

  it("orders by run_at before id: a job due earlier runs first though queued later", async () => {
    const a = await enqueue({ delayMs: 2_000 });
    const b = await enqueue({ delayMs: 1_000 });
    clock.advance(2_000);
    expect(await claimIds("w1", 10)).toEqual([b, a]);
  });

  it("claims no more than the limit", async () => {
    const [a, b] = [await enqueue(), await enqueue(), await enqueue()];
    expect(await claimIds("w1", 2)).toEqual([a, b]);
  });

  it("claims up to each limit asked for in turn, larger and smaller", async () => {
    // SQLite keeps a statement per limit: each claim must still take its own limit's worth.
    const queued = [];
    for (let i = 0; i < 8; i++) queued.push(await enqueue());
    expect(await claimIds("w1", 1)).toEqual(queued.slice(0, 1));
    expect(await claimIds("w1", 3)).toEqual(queued.slice(1, 4));
    expect(await claimIds("w1", 1)).toEqual(queued.slice(4, 5));
    expect(await claimIds("w1", 16)).toEqual(queued.slice(5));
  });

  it("runs the jobs of one queue one at a time, in the order they were queued", async () => {
    const s1 = [await enqueue({ queueKey: "svc:1" }), await enqueue({ queueKey: "svc:1" }), await enqueue({ queueKey: "svc:1" })];
    const s2 = await enqueue({ queueKey: "svc:2" });
    const free = await enqueue();
    const claimed = await store.jobs.claim("w1", 10, LEASE);
    expect(ids(claimed)).toEqual([s1[0], s2, free]);
    expect(await claimIds("w2")).toEqual([]);
    await store.jobs.finish(claimed[0]!, "w1", { state: "succeeded" });
    const next = await claimOne("w2");
    expect(next.id).toBe(s1[1]);
    expect(await claimIds("w2")).toEqual([]);
    await store.jobs.finish(next, "w2", { state: "failed", error: "gave up", code: "job_failed" });
    // A failed job no longer holds its queue.
    expect(await claimIds("w1")).toEqual([s1[2]]);
  });

  it("holds a queue behind a blocked job until the operator retries it", async () => {
    const [a, b] = [await enqueue({ queueKey: "svc:1" }), await enqueue({ queueKey: "svc:1" })];
    const job = await claimOne();
    expect(await store.jobs.finish(job, "w1", { state: "blocked", error: "needs the operator", code: "upstream_refused" })).toBe("blocked");
    clock.advance(60_000);
    expect(await claimIds()).toEqual([]);
    expect((await store.jobs.retry(a))?.state).toBe("queued");
    const again = await claimOne();
    expect(again.id).toBe(a);
    expect(await claimIds()).toEqual([]);
    await store.jobs.finish(again, "w1", { state: "succeeded" });
    expect(await claimIds()).toEqual([b]);
  });

  it("does not start an earlier job again while a later job of its queue runs (an operator's retry)", async () => {
    const [a, b] = [await enqueue({ queueKey: "svc:1" }), await enqueue({ queueKey: "svc:1" })];
    await store.jobs.finish(await claimOne(), "w1", { state: "failed", error: "no", code: "job_failed" });
    const running = await claimOne();
    expect(running.id).toBe(b);
    expect((await store.jobs.retry(a))?.state).toBe("queued");
    expect(await claimIds("w2")).toEqual([]);
    await store.jobs.finish(running, "w1", { state: "succeeded" });
    expect(await claimIds("w2")).toEqual([a]);
  });

  it("takes back a job whose lease ran out, but never for the worker that holds it", async () => {
    const id = await enqueue();
    const first = await claimOne("w1");
    clock.advance(LEASE + 1);
    // w1 knows its job still runs: a clock jump must not start a second copy beside it.
    expect(await claimIds("w1")).toEqual([]);
    const second = await claimOne("w2");
    expect(second).toMatchObject({ id, attempts: 2, leasedBy: "w2", leaseUntil: clock.now() + LEASE });
    // The first worker's late ending is not recorded: the job is no longer its own.
    expect(await store.jobs.finish(first, "w1", { state: "succeeded" })).toBeUndefined();
    expect((await store.jobs.get(id))?.state).toBe("running");
  });

  it("keeps a lease alive with heartbeats", async () => {
    await enqueue();
    await claimOne("w1");
    clock.advance(LEASE - 1_000);
    await store.jobs.heartbeat("w1", LEASE);
    clock.advance(LEASE - 1_000);
    expect(await claimIds("w2")).toEqual([]);
    clock.advance(1_001);
    expect(await claimIds("w2")).toHaveLength(1);
  });

  it("puts back the running jobs of workers found dead", async () => {
    const [a, b] = [await enqueue(), await enqueue()];
    await store.jobs.claim("dead", 1, LEASE);
    await store.jobs.claim("alive", 1, LEASE);
    expect(await store.jobs.reclaimFrom((w) => w === "dead")).toBe(1);
    expect((await store.jobs.get(a))?.state).toBe("queued");
    expect((await store.jobs.get(b))?.state).toBe("running");
    expect(await claimIds("w3")).toEqual([a]);
  });

  it("gives the attempt back when a job is released, and queues it at once", async () => {
    const id = await enqueue();
    const job = await claimOne();
    expect(job.attempts).toBe(1);
    expect(await store.jobs.finish(job, "w1", { state: "released" })).toBe("queued");
    expect(await store.jobs.get(id)).toMatchObject({ state: "queued", attempts: 0, leasedBy: null, leaseUntil: null });
    expect((await claimOne()).attempts).toBe(1);
  });

  it("retries after the delay and fails once the attempts are used up", async () => {
    const id = await enqueue({ maxAttempts: 2 });
    let job = await claimOne();
    expect(await store.jobs.finish(job, "w1", { state: "retry", error: "timeout", code: "upstream_timeout", delayMs: 500 })).toBe("queued");
    expect(await store.jobs.get(id)).toMatchObject({ state: "queued", attempts: 1, runAt: clock.now() + 500, lastError: "timeout", errorCode: null });
    expect(await claimIds()).toEqual([]);
    clock.advance(500);
    job = await claimOne();
    expect(job.attempts).toBe(2);
    expect(await store.jobs.finish(job, "w1", { state: "retry", error: "timeout again", code: "upstream_timeout", delayMs: 500 })).toBe("failed");
    expect(await store.jobs.get(id)).toMatchObject({ state: "failed", attempts: 2, lastError: "timeout again", errorCode: "upstream_timeout" });
  });

  it("uses the store's maxAttempts for jobs that name none", async () => {
    await enqueue();
    for (let attempt = 1; attempt <= 3; attempt++) {
      const job = await claimOne();
      expect(job.maxAttempts).toBe(3);
      const state = await store.jobs.finish(job, "w1", { state: "retry", error: "x", code: null, delayMs: 0 });
      expect(state).toBe(attempt < 3 ? "queued" : "failed");
    }
  });

  it("defers without failing: an unspent attempt is given back, a spent one is kept", async () => {
    const id = await enqueue({ maxAttempts: 1 });
    let job = await claimOne();
    expect(await store.jobs.finish(job, "w1", { state: "deferred", error: "rate limited", delayMs: 1_000, spent: false })).toBe("queued");
    expect(await store.jobs.get(id)).toMatchObject({ state: "queued", attempts: 0, runAt: clock.now() + 1_000, lastError: "rate limited" });
    expect(await claimIds()).toEqual([]);
    clock.advance(1_000);
    job = await claimOne();
    expect(job.attempts).toBe(1);
    expect(await store.jobs.finish(job, "w1", { state: "deferred", error: "still settling", delayMs: 0, spent: true })).toBe("queued");
    expect(await store.jobs.get(id)).toMatchObject({ state: "queued", attempts: 1 });
  });

  it("creates a job once per unique key and returns the first job's id after", async () => {
    const first = await store.jobs.enqueue({ kind: "renew", uniqueKey: "renew:s1:2026-02-01" });
    const second = await store.jobs.enqueue({ kind: "renew", uniqueKey: "renew:s1:2026-02-01", payload: { other: true } });
    expect(first.created).toBe(true);
    expect(second).toEqual({ id: first.id, created: false });
    expect(await store.jobs.list({ kind: "renew" })).toHaveLength(1);
    expect((await store.jobs.get(first.id))?.payload).toEqual({});
  });

  it("puts blocked jobs of a kind back once they have been blocked long enough, attempts kept", async () => {
    const renew = await enqueue({ kind: "renew" });
    const other = await enqueue({ kind: "other" });
    for (const job of await store.jobs.claim("w1", 2, LEASE)) await store.jobs.finish(job, "w1", { state: "blocked", error: "no funds", code: "upstream_refused" });
    expect(await store.jobs.requeueBlocked("renew", 60_000)).toBe(0);
    clock.advance(60_000);
    expect(await store.jobs.requeueBlocked("renew", 60_000)).toBe(1);
    expect(await store.jobs.get(renew)).toMatchObject({ state: "queued", attempts: 1, errorCode: null, runAt: clock.now() });
    expect((await store.jobs.get(other))?.state).toBe("blocked");
  });

  it("retries only failed and blocked jobs, with fresh attempts", async () => {
    const [queued, running, done, failed] = [await enqueue(), await enqueue(), await enqueue(), await enqueue()];
    const claimed = await store.jobs.claim("w1", 4, LEASE);
    await store.jobs.finish(claimed[2]!, "w1", { state: "succeeded" });
    await store.jobs.finish(claimed[3]!, "w1", { state: "failed", error: "no", code: "job_failed" });
    await store.jobs.finish(claimed[0]!, "w1", { state: "released" });
    expect((await store.jobs.get(queued))?.state).toBe("queued");
    expect(await store.jobs.retry(queued)).toBeUndefined();
    expect(await store.jobs.retry(running)).toBeUndefined();
    expect(await store.jobs.retry(done)).toBeUndefined();
    expect(await store.jobs.retry(9_999_999)).toBeUndefined();
    expect(await store.jobs.retry(failed)).toMatchObject({ id: failed, state: "queued", attempts: 0, errorCode: null });
  });

  it("keeps a recorded intent across attempts and clears it when the job succeeds", async () => {
    const id = await enqueue();
    let job = await claimOne();
    expect(await store.jobs.setIntent(id, "w1", { buy: "licence", ip: "203.0.113.5" }, true)).toBe(true);
    // Only the worker holding the job may write its intent; another learns it holds nothing.
    expect(await store.jobs.setIntent(id, "intruder", { buy: "other" }, true)).toBe(false);
    await store.jobs.finish(job, "w1", { state: "retry", error: "lost answer", code: null, delayMs: 0 });
    job = await claimOne();
    expect(job.intent).toEqual({ buy: "licence", ip: "203.0.113.5" });
    await store.jobs.finish(job, "w1", { state: "succeeded" });
    expect((await store.jobs.get(id))?.intent).toBeNull();
  });

  it("writes no intent for a worker whose lease ran out and was taken back, and says so", async () => {
    const id = await enqueue();
    await claimOne("paused");
    clock.advance(LEASE + 1);
    const taken = await claimOne("w2");
    expect(taken.id).toBe(id);
    expect(await store.jobs.setIntent(id, "paused", { buy: "licence" }, true)).toBe(false);
    expect((await store.jobs.get(id))?.intent).toBeNull();
  });

  it("clears an intent when asked (the call is known not to have taken effect)", async () => {
    const id = await enqueue();
    await claimOne();
    await store.jobs.setIntent(id, "w1", { buy: 1 }, false);
    await store.jobs.setIntent(id, "w1", null, false);
    expect((await store.jobs.get(id))?.intent).toBeNull();
  });

  it("lists, counts and shows a queue's unfinished jobs", async () => {
    const a = await enqueue({ queueKey: "svc:1", serviceId: "1", kind: "register", payload: { n: 1 } });
    const b = await enqueue({ queueKey: "svc:1", serviceId: "1", kind: "suspend" });
    const c = await enqueue({ queueKey: "svc:2", serviceId: "2", kind: "register" });
    await store.jobs.finish(await claimOne(), "w1", { state: "succeeded" });
    expect(await store.jobs.counts()).toEqual({ queued: 2, running: 0, succeeded: 1, failed: 0, blocked: 0, cancelled: 0 });
    expect(ids(await store.jobs.unfinished("svc:1"))).toEqual([b]);
    expect(ids(await store.jobs.list({ serviceId: "1" }))).toEqual([b, a]);
    expect(ids(await store.jobs.list({ state: "succeeded" }))).toEqual([a]);
    expect(await store.jobs.list({ kind: "register", limit: 1 })).toHaveLength(1);
    // The filters together, as the admin API, the CLI and the tests combine them.
    expect(ids(await store.jobs.list({ state: "queued", kind: "register" }))).toEqual([c]);
    expect(ids(await store.jobs.list({ state: "queued", serviceId: "1" }))).toEqual([b]);
    expect(ids(await store.jobs.list({ state: "succeeded", serviceId: "1", kind: "register" }))).toEqual([a]);
    expect(ids(await store.jobs.list({ serviceId: "2", kind: "register" }))).toEqual([c]);
    expect(await store.jobs.list({ serviceId: "2", kind: "suspend" })).toEqual([]);
    expect(await store.jobs.get(a)).toMatchObject({ kind: "register", queueKey: "svc:1", serviceId: "1", payload: { n: 1 }, createdAt: clock.now() });
  });

  it("ends a skipped job succeeded, saying why, and frees its unique key: the same work may be queued again", async () => {
    const first = await enqueue({ uniqueKey: "renew:s1:term-1", serviceId: "s1" });
    await store.jobs.finish(await claimOne(), "w1", { state: "succeeded", skipped: "the service is suspended" });
    expect(await store.jobs.get(first)).toMatchObject({ state: "succeeded", skipped: "the service is suspended", uniqueKey: null });
    const again = await store.jobs.enqueue({ kind: "test", uniqueKey: "renew:s1:term-1", serviceId: "s1" });
    expect(again).toMatchObject({ created: true });
    expect(again.id).not.toBe(first);
  });

  it("tells its listeners when a job is runnable now, not when it is delayed", async () => {
    let woken = 0;
    const off = store.onJobReady(() => woken++);
    await enqueue({ delayMs: 5_000 });
    expect(woken).toBe(0);
    await enqueue();
    expect(woken).toBe(1);
    const job = await claimOne();
    await store.jobs.finish(job, "w1", { state: "succeeded" });
    expect(woken).toBe(2);
    off();
    await enqueue();
    expect(woken).toBe(2);
  });
});
