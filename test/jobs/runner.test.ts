import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { systemClock, type Clock } from "../../src/clock.js";
import { defineJob, jobKind } from "../../src/jobs/define.js";
import { JobBlockedError, JobDeferredError, JobFailedError, JobRetryError } from "../../src/jobs/errors.js";
import { JobRunner } from "../../src/jobs/runner.js";
import type { Job } from "../../src/vocabulary/jobs.js";
import { createLogger, silentLogger } from "../../src/log/logger.js";
import type { JobEnding, JobOps } from "../../src/store/store.js";
import { sqliteFactory, type OpenedStore } from "../helpers/stores.js";
import { callOnce } from "../../src/lifecycle/call-once.js";

const KIND = jobKind({ kind: "runner_test", payload: z.object({}) });

function job(id: number): Job {
  const now = Date.now();
  return {
    id,
    kind: KIND.kind,
    queueKey: null,
    serviceId: null,
    eventId: null,
    uniqueKey: null,
    payload: {},
    state: "running",
    attempts: 1,
    maxAttempts: 5,
    runAt: now,
    leaseUntil: now + 20_000,
    leasedBy: "w",
    intent: null,
    lastError: null,
    errorCode: null,
    skipped: null,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * Job operations whose claims answer only when the test says so, as a store across a network
 * (PostgreSQL) does: the runner's fill is suspended in the claim meanwhile.
 */
function slowClaims(options: { lostLease?: boolean } = {}) {
  const claims: { resolve(jobs: Job[]): void }[] = [];
  const endings: { id: number; ending: JobEnding["state"] }[] = [];
  const fail = (): never => {
    throw new Error("not used by this test");
  };
  const jobs: JobOps = {
    claim: () => new Promise<Job[]>((resolve) => claims.push({ resolve })),
    reclaimFrom: async () => 0,
    heartbeat: async () => undefined,
    finish: async (j, _worker, ending) => {
      endings.push({ id: j.id, ending: ending.state });
      // A lost lease: another worker took the job back, this one's ending changes nothing.
      if (options.lostLease) return undefined;
      if (ending.state === "retry") return j.attempts >= j.maxAttempts ? "failed" : "queued";
      return ending.state === "released" || ending.state === "deferred" ? "queued" : ending.state;
    },
    enqueue: fail,
    setIntent: fail,
    requeueBlocked: fail,
    retry: fail,
    cancel: fail,
    get: fail,
    list: fail,
    page: fail,
    counts: fail,
    queue: fail,
    unfinished: fail,
  };
  return { jobs, claims, endings };
}

/** A runner of `handler` alone on `store`'s claims (polled once a minute), started and given job `id` to run. */
async function runClaimed(store: ReturnType<typeof slowClaims>, handler: Parameters<typeof defineJob<Record<string, never>>>[1], id: number): Promise<JobRunner> {
  const runner = new JobRunner({
    jobs: store.jobs,
    onJobReady: () => () => undefined,
    definitions: [defineJob(KIND, handler)],
    logger: silentLogger(),
    clock: systemClock,
    pollMs: 60_000,
    isBusy: () => false,
  });
  await runner.start();
  await expect.poll(() => store.claims.length).toBe(1);
  store.claims[0]!.resolve([job(id)]);
  return runner;
}

/** A runner of `handler` alone on a real store, polling once a minute: only its own wakes run a job. */
function runnerOn(
  opened: OpenedStore,
  handler: Parameters<typeof defineJob<Record<string, never>>>[1],
  options: { clock: Clock; baseDelayMs?: number },
): JobRunner {
  return new JobRunner({
    jobs: opened.store.jobs,
    onJobReady: (l) => opened.store.onJobReady(l),
    definitions: [defineJob(KIND, handler)],
    logger: silentLogger(),
    pollMs: 60_000,
    isBusy: () => false,
    ...options,
  });
}

describe("job runner", () => {
  it("stopped while a claim is under way: the claimed jobs are given back untouched, never started, before stop() resolves", async () => {
    const store = slowClaims();
    const started: number[] = [];
    const runner = new JobRunner({
      jobs: store.jobs,
      onJobReady: () => () => undefined,
      definitions: [defineJob(KIND, async (j) => void started.push(j.id))],
      logger: silentLogger(),
      clock: systemClock,
      pollMs: 60_000,
    });
    await runner.start();
    await expect.poll(() => store.claims.length).toBe(1);

    const stopped = runner.stop(1_000);
    // The claim answers after stop() began (the SIGTERM came while it was in flight).
    store.claims[0]!.resolve([job(1), job(2)]);
    expect(await stopped).toEqual({ unfinished: 0 });

    expect(started).toEqual([]);
    expect(store.endings).toEqual([
      { id: 1, ending: "released" },
      { id: 2, ending: "released" },
    ]);
  });

  it.each([
    ["failed", new JobFailedError("no such product")],
    ["blocked", new JobBlockedError("no balance")],
  ] as const)("tells the observer a job %s only when the store recorded it so for this worker", async (state, error) => {
    for (const lostLease of [false, true]) {
      const store = slowClaims({ lostLease });
      const stopped: { id: number; state: string }[] = [];
      const attempts: string[] = [];
      const runner = new JobRunner({
        jobs: store.jobs,
        onJobReady: () => () => undefined,
        definitions: [defineJob(KIND, async () => Promise.reject(error))],
        logger: silentLogger(),
        clock: systemClock,
        pollMs: 60_000,
        observer: {
          attemptFinished: (_job, outcome) => void attempts.push(outcome),
          jobStopped: (job, s) => void stopped.push({ id: job.id, state: s }),
        },
      });
      await runner.start();
      await expect.poll(() => store.claims.length).toBe(1);
      store.claims[0]!.resolve([job(7)]);
      await expect.poll(() => attempts).toEqual([state]);
      // The next claim never answers: stop() gives up on it after the grace.
      await runner.stop(100);
      expect(store.endings, `lost lease: ${lostLease}`).toEqual([{ id: 7, ending: state }]);
      expect(stopped, `lost lease: ${lostLease}`).toEqual(lostLease ? [] : [{ id: 7, state }]);
    }
  });

  it("an outcome the store failed to record (not a busy lock: a full disk, say) is recorded on a later poll, not left running", async () => {
    const store = slowClaims();
    const errors: string[] = [];
    let failures = 1;
    const finish = store.jobs.finish;
    store.jobs.finish = async (j, worker, ending) => {
      if (failures-- > 0) {
        store.endings.push({ id: j.id, ending: ending.state });
        throw new Error("SQLITE_FULL: database or disk is full");
      }
      return finish(j, worker, ending);
    };
    const lines = new PassThrough();
    lines.on("data", (chunk: Buffer) => {
      for (const line of chunk.toString().split("\n").filter(Boolean)) {
        const entry = JSON.parse(line) as { level: number; err?: { message: string } };
        if (entry.level >= 50) errors.push(entry.err?.message ?? "");
      }
    });
    const logger = createLogger({ level: "error", pretty: false, destination: lines });
    const ran: number[] = [];
    const runner = new JobRunner({
      jobs: store.jobs,
      onJobReady: () => () => undefined,
      definitions: [defineJob(KIND, async (j) => void ran.push(j.id))],
      logger,
      clock: systemClock,
      pollMs: 20,
      isBusy: () => false,
    });
    await runner.start();
    await expect.poll(() => store.claims.length).toBe(1);
    store.claims[0]!.resolve([job(3)]);
    // Later claims find nothing, so the polls go on.
    const answerClaims = setInterval(() => store.claims.forEach((c) => c.resolve([])), 5);
    try {
      await expect.poll(() => store.endings).toEqual([
        { id: 3, ending: "succeeded" },
        { id: 3, ending: "succeeded" },
      ]);
    } finally {
      clearInterval(answerClaims);
      await runner.stop(100);
    }
    expect(ran).toEqual([3]);
    expect(errors).toEqual(["SQLITE_FULL: database or disk is full"]);
  });

  // A timer can fire a little before the clock the job was dated by reaches its due time (seen in
  // CI: the claim found nothing and the retry waited for the minute's poll). A clock running at half
  // the timers' speed makes every due-time timer early, so the runner must look at the clock again.
  const start = Date.now();
  const halfSpeedClock: Clock = { now: () => start + Math.floor((Date.now() - start) / 2) };

  // The contract: a transient failure is retried first within 2 seconds. The runner's poll (here
  // once a minute) must not decide when: the job's own due time does.
  it.each([
    ["a retry", "the system clock", systemClock, (run: number) => (run === 1 ? new JobRetryError("upstream 503") : undefined)],
    ["a deferral", "the system clock", systemClock, (run: number) => (run === 1 ? new JobDeferredError(Date.now() + 100, "wait a moment", false) : undefined)],
    ["a retry", "a clock behind the timers", halfSpeedClock, (run: number) => (run === 1 ? new JobRetryError("upstream 503") : undefined)],
    [
      "a deferral",
      "a clock behind the timers",
      halfSpeedClock,
      (run: number) => (run === 1 ? new JobDeferredError(halfSpeedClock.now() + 100, "wait a moment", false) : undefined),
    ],
  ] as const)("runs %s again when it falls due, not at the next poll (%s)", async (_name, _clockName, clock, failure) => {
    const opened = await sqliteFactory.open({ clock });
    let runs = 0;
    const runner = runnerOn(
      opened,
      async () => {
        const err = failure(++runs);
        if (err) throw err;
      },
      { clock, baseDelayMs: 100 },
    );
    try {
      await runner.start();
      const { id } = await opened.store.jobs.enqueue({ kind: KIND.kind });
      await expect.poll(async () => (await opened.store.jobs.get(id))?.state, { timeout: 5_000 }).toBe("succeeded");
      expect(runs).toBe(2);
    } finally {
      await runner.stop(1_000);
      await opened.close();
    }
  });

  // setTimeout takes at most 2^31-1 ms (24.8 days); a longer delay fires after 1 ms, with a
  // TimeoutOverflowWarning. A job deferred further out (a lost answer's lost_at written by an
  // instance whose clock ran weeks ahead) must not make the due-time wake re-arm every millisecond.
  it("a due time beyond setTimeout's range arms no timer that fires at once", async () => {
    const opened = await sqliteFactory.open({ clock: systemClock });
    let runs = 0;
    let overflows = 0;
    const onWarning = (w: Error) => {
      if (w.name === "TimeoutOverflowWarning") overflows++;
    };
    process.on("warning", onWarning);
    const runner = runnerOn(
      opened,
      async () => {
        runs++;
        throw new JobDeferredError(Date.now() + 30 * 86_400_000, "a month from now", false);
      },
      { clock: systemClock },
    );
    try {
      await runner.start();
      const { id } = await opened.store.jobs.enqueue({ kind: KIND.kind });
      await expect.poll(async () => (await opened.store.jobs.get(id))?.lastError, { timeout: 5_000 }).toBe("a month from now");
      // A second job, deferred in turn, proves the runner went round again after arming its wake for
      // the first: a wake that overflowed would have fired (and warned) by then, and run nothing due.
      const second = await opened.store.jobs.enqueue({ kind: KIND.kind });
      await expect.poll(async () => (await opened.store.jobs.get(second.id))?.lastError, { timeout: 5_000 }).toBe("a month from now");
      expect(runs).toBe(2);
      expect(overflows).toBe(0);
    } finally {
      process.off("warning", onWarning);
      await runner.stop(1_000);
      await opened.close();
    }
  });

  // The fence before a charge (contract §10: each job runs on one instance at a time): a worker
  // paused past its lease finds, when it announces its call, that it no longer holds the job.
  it("makes no call and records nothing when the intent finds the job's lease lost", async () => {
    const store = slowClaims({ lostLease: true });
    const calls: string[] = [];
    store.jobs.setIntent = async () => {
      calls.push("intent");
      return false;
    };
    const runner = await runClaimed(
      store,
      async (_j, ctx) => {
        await ctx.recordIntent({ op: "register" });
        calls.push("register");
      },
      7,
    );
    await expect.poll(() => calls).toEqual(["intent"]);
    await runner.stop(1_000);
    expect(calls).toEqual(["intent"]);
    expect(store.endings).toEqual([]);
  });

  // The lease can run out after the intent was written, while the call waits for an upstream
  // slot: once() writes the intent again right before the send, and that write is the fence.
  it("stops a charging call at its send when the lease was lost after the intent was written", async () => {
    const store = slowClaims({ lostLease: true });
    const writes: boolean[] = [];
    store.jobs.setIntent = async () => {
      const held = writes.length === 0; // the first write finds the lease, the one before the send does not
      writes.push(held);
      return held;
    };
    const sent: string[] = [];
    const runner = await runClaimed(
      store,
      async (j, ctx) => {
        await callOnce(j, ctx, { op: "register:cpanel" }, async () => false, async (beforeSend) => {
          await beforeSend();
          sent.push("register");
        });
      },
      8,
    );
    await expect.poll(() => writes).toEqual([true, false]);
    await runner.stop(1_000);
    expect(sent).toEqual([]);
    expect(store.endings).toEqual([]);
  });

  // The hook tests wait on instead of polling the store (test/helpers/e2e-harness.ts).
  describe("whenIdle and onSettled", () => {
    /** A runner on a real store that neither polls (once a minute) nor hears enqueues: only whenIdle makes it look. */
    function deafRunner(opened: OpenedStore, handler: Parameters<typeof defineJob<Record<string, never>>>[1]): JobRunner {
      return new JobRunner({
        jobs: opened.store.jobs,
        onJobReady: () => () => undefined,
        definitions: [defineJob(KIND, handler)],
        logger: silentLogger(),
        clock: systemClock,
        pollMs: 60_000,
        isBusy: () => false,
      });
    }

    it("whenIdle looks for due jobs at once and resolves once they have run and their outcomes are recorded", async () => {
      const opened = await sqliteFactory.open({ clock: systemClock });
      const runner = deafRunner(opened, async () => undefined);
      try {
        await runner.start();
        await runner.whenIdle();
        const ids = [(await opened.store.jobs.enqueue({ kind: KIND.kind })).id, (await opened.store.jobs.enqueue({ kind: KIND.kind })).id];
        await runner.whenIdle();
        expect(await Promise.all(ids.map(async (id) => (await opened.store.jobs.get(id))?.state))).toEqual(["succeeded", "succeeded"]);
      } finally {
        await runner.stop(1_000);
        await opened.close();
      }
    });

    it("whenIdle leaves a job due later queued (a retry's backoff, a settle window) rather than wait for it", async () => {
      const opened = await sqliteFactory.open({ clock: systemClock });
      const runner = deafRunner(opened, async () => {
        throw new JobDeferredError(Date.now() + 3_600_000, "an hour from now", false);
      });
      try {
        await runner.start();
        const { id } = await opened.store.jobs.enqueue({ kind: KIND.kind });
        await runner.whenIdle();
        expect(await opened.store.jobs.get(id)).toMatchObject({ state: "queued", lastError: "an hour from now" });
      } finally {
        await runner.stop(1_000);
        await opened.close();
      }
    });

    it("onSettled tells its listener after each recorded attempt, until it stops listening", async () => {
      const opened = await sqliteFactory.open({ clock: systemClock });
      const runner = deafRunner(opened, async () => undefined);
      const seen: (string | undefined)[] = [];
      let id = 0;
      const stop = runner.onSettled(() => void seen.push(String(id)));
      try {
        await runner.start();
        id = (await opened.store.jobs.enqueue({ kind: KIND.kind })).id;
        seen.length = 0;
        await runner.whenIdle();
        // Told at least once by the time the attempt's outcome is in the store (and once more idle).
        expect(seen.length).toBeGreaterThanOrEqual(2);
        expect((await opened.store.jobs.get(id))?.state).toBe("succeeded");
        stop();
        seen.length = 0;
        await runner.whenIdle();
        expect(seen).toEqual([]);
      } finally {
        await runner.stop(1_000);
        await opened.close();
      }
    });

    it("whenIdle of a stopped runner resolves at once, and so does one waiting when it stops", async () => {
      const store = slowClaims();
      const runner = new JobRunner({ jobs: store.jobs, onJobReady: () => () => undefined, definitions: [], logger: silentLogger(), clock: systemClock, pollMs: 60_000 });
      await runner.start();
      // Its claim never answers: the wait ends only with stop().
      const waiting = runner.whenIdle();
      await runner.stop(100);
      await waiting;
      await runner.whenIdle();
    });
  });
});
