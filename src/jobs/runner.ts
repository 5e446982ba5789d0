import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { ZodError } from "zod";
import type { Clock } from "../clock.js";
import type { ErrorCode } from "../vocabulary/error-codes.js";
import type { Logger } from "../log/logger.js";
import type { JobEnding, JobOps, ServiceChange, StopRecord } from "../store/store.js";
import { backoffDelay } from "./backoff.js";
import type { JobContext, JobDefinition } from "./define.js";
import {
  isDisposed,
  isProgrammingError,
  JobDeferredError,
  JobFailedError,
  JobInterruptedError,
  JobLeaseLostError,
  JobSkippedError,
  type Disposition,
} from "./errors.js";
import type { Job, JobState } from "../vocabulary/jobs.js";


export type AttemptOutcome = "succeeded" | "skipped" | "retry" | "deferred" | "failed" | "blocked";

export interface RunnerObserver {
  attemptFinished?(job: Job, outcome: AttemptOutcome, durationMs: number, error?: unknown): void;
  /** A job ended failed or blocked (its StopRecord is written by then): the place for operator alerts. */
  jobStopped?(job: Job, state: Extract<JobState, "failed" | "blocked">, message: string, error: unknown): Promise<void> | void;
}

export interface JobRunnerOptions {
  jobs: JobOps;
  /** Wakes the runner when a job becomes runnable (this process's enqueues; other instances' on PostgreSQL). */
  onJobReady(listener: () => void): () => void;
  definitions: readonly JobDefinition[];
  logger: Logger;
  clock: Clock;
  /** How long a claim holds without a heartbeat; a dead worker's jobs come back after it. (Default: 20000 ms) */
  leaseMs?: number;
  /** Jobs in flight at once. (Default: 8) */
  concurrency?: number;
  /** How often to look for due jobs when nothing wakes the runner. (Default: 500 ms) */
  pollMs?: number;
  /** Cap of the retry delay. (Default: 300000 ms) */
  maxDelayMs?: number;
  /** First retry delay, at most. (Default: 2000 ms) */
  baseDelayMs?: number;
  observer?: RunnerObserver;
  /** What a job that stops (failed or blocked) records beside its ending, in the same transaction. (Default: nothing) */
  stopRecord?: (job: Job, message: string) => StopRecord | undefined;
  /** What a job skipped by its handler (JobSkippedError) writes to its service with its ending. (Default: nothing) */
  skipRecord?: (job: Job, why: string) => ServiceChange | undefined;
  workerId?: string;
  /** Claim new jobs only while this says so (false: the database file is gone). (Default: always) */
  canClaim?: () => boolean;
  /** A store error worth trying again soon (SQLite: another process holds the write lock). (Default: none) */
  isBusy?: (err: unknown) => boolean;
}

/**
 * Worker ids are "host:pid:random". A worker of this host whose process no longer exists is
 * dead for sure; anything else (another host, a live pid) is left to its lease.
 */
export function deadOnThisHost(worker: string, self: string): boolean {
  const [host, pidText] = worker.split(":");
  if (worker === self || host !== hostname()) return false;
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}

type Verdict = { disposition: Disposition; message: string; code: ErrorCode };

/**
 * What a failed attempt means. The error says so itself (a handler's JobBlockedError, a
 * reseller error by its kind); the runner adds only the rules about errors that do not know
 * jobs: a programming error (TypeError, a payload that breaks its schema) fails at once instead
 * of being retried twenty times, and anything else (a store briefly busy, a socket error) is
 * transient.
 */
export function judgeFailure(err: unknown): Verdict {
  const message = err instanceof Error ? err.message : String(err);
  if (isDisposed(err)) return { disposition: err.disposition, message, code: err.errorCode };
  if (isProgrammingError(err) || err instanceof ZodError) return { disposition: "fail", message: `${(err as Error).name}: ${message}`, code: "job_failed" };
  return { disposition: "retry", message, code: "job_failed" };
}

/** The longest delay setTimeout takes (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** One write of a finished attempt's bookkeeping, retried as a whole when the store is busy. */
type Step = () => Promise<void> | void;

export class JobRunner {
  readonly workerId: string;
  readonly leaseMs: number;
  private readonly inFlight = new Map<number, Promise<void>>();
  /** Finished attempts whose outcome could not be written yet (the store was busy or failed). */
  private readonly unrecorded = new Map<number, { logger: Logger; steps: Step[]; failures: number }>();
  private readonly byKind: Map<string, JobDefinition>;
  private claimBusy = false;
  /** Set when stop() gave up waiting: late endings of the jobs still running are not recorded. */
  private abandoned = false;
  private running = false;
  /** The fill under way (one at a time); stop() waits for it, so no claim outlives it unnoticed. */
  private filling: Promise<void> | undefined;
  private refill = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private wakeScheduled = false;
  /** Wake-ups at the times retried jobs fall due (the poll alone could add its interval to the contract's 2 s). */
  private readonly dueTimers = new Set<NodeJS.Timeout>();
  private unsubscribe: (() => void) | undefined;
  private readonly concurrency: number;
  /** Who asked to hear when the runner has done something (onSettled), and who waits for it to be idle (whenIdle). */
  private readonly settledListeners = new Set<() => void>();
  private readonly idleWaiters = new Set<() => void>();

  constructor(private readonly o: JobRunnerOptions) {
    this.workerId = o.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
    this.concurrency = o.concurrency ?? 8;
    this.leaseMs = o.leaseMs ?? 20_000;
    this.byKind = new Map(o.definitions.map((d) => [d.kind, d]));
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const reclaimed = await this.o.jobs.reclaimFrom((w) => deadOnThisHost(w, this.workerId));
      if (reclaimed) this.o.logger.warn({ reclaimed }, "took back jobs of a process on this host that died while running them");
    } catch (err) {
      // Their leases run out and they come back with the next claims; only later than at once.
      this.o.logger.warn({ err }, "could not take back the jobs of dead processes now; their leases will bring them back");
    }
    if (!this.running) return;
    this.unsubscribe = this.o.onJobReady(() => this.wake());
    this.pollTimer = setInterval(() => void this.fill(), this.o.pollMs ?? 500);
    this.heartbeatTimer = setInterval(() => {
      if (this.inFlight.size === 0 && this.unrecorded.size === 0) return;
      // Four beats per lease: one missed (the store busy) costs nothing. A timer must not throw.
      this.o.jobs.heartbeat(this.workerId, this.leaseMs).catch((err: unknown) => this.o.logger.warn({ err }, "could not extend the leases of running jobs"));
    }, Math.max(250, Math.floor(this.leaseMs / 4)));
    void this.fill();
  }

  /**
   * Stops claiming, waits up to `graceMs` for running jobs, and leaves the rest to lease expiry:
   * from then on the runner writes nothing for them (the store is about to be closed), and a
   * restart takes them back.
   */
  async stop(graceMs = 10_000): Promise<{ unfinished: number }> {
    this.running = false;
    clearInterval(this.pollTimer);
    for (const timer of this.dueTimers) clearTimeout(timer);
    this.dueTimers.clear();
    this.unsubscribe?.();
    this.settled(true);
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise((r) => (timer = setTimeout(r, graceMs)));
    // A claim still under way gives its jobs back (see fillRounds) before the running ones are counted.
    await Promise.race([this.filling?.catch(() => undefined), grace]);
    const all = Promise.allSettled([...this.inFlight.values()]);
    await Promise.race([all, grace]);
    clearTimeout(timer);
    clearInterval(this.heartbeatTimer);
    if (this.inFlight.size > 0) this.abandoned = true;
    return { unfinished: this.inFlight.size };
  }

  /**
   * Calls `listener` each time an attempt's outcome has been recorded, and each time a look for
   * due jobs finds none while nothing runs: for whoever waits on the queue (a test, a tool) to look
   * again when something has happened rather than on a timer of its own. Returns how to stop.
   */
  onSettled(listener: () => void): () => void {
    this.settledListeners.add(listener);
    return () => this.settledListeners.delete(listener);
  }

  /**
   * Resolves once nothing runs, every outcome is recorded, and a look for due jobs made after the
   * call found none, as graphile-worker's `runTaskListOnce` returns: jobs due later (a retry's
   * backoff, a settle window) are left queued. It looks at once, not at the next poll. Resolves
   * at once when the runner is stopped; never while it may not claim (the database file gone).
   */
  whenIdle(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => {
      this.idleWaiters.add(resolve);
      this.wake();
    });
  }

  private settled(idle: boolean): void {
    for (const listener of [...this.settledListeners]) {
      try {
        listener();
      } catch (err) {
        this.o.logger.warn({ err }, "a listener of the job runner threw");
      }
    }
    if (!idle) return;
    const waiters = [...this.idleWaiters];
    this.idleWaiters.clear();
    for (const resolve of waiters) resolve();
  }

  private wake(): void {
    if (this.wakeScheduled || !this.running) return;
    this.wakeScheduled = true;
    // After the current transaction has committed and the caller has returned.
    setImmediate(() => {
      this.wakeScheduled = false;
      void this.fill();
    });
  }

  /** Looks for due jobs again in `delayMs`, when a job this runner put back falls due. */
  private wakeAfter(delayMs: number): void {
    this.wakeAt(this.o.clock.now() + delayMs);
  }

  private wakeAt(dueAt: number): void {
    if (!this.running) return;
    const timer = setTimeout(
      () => {
        this.dueTimers.delete(timer);
        // A timer may fire a millisecond before the clock the store dated the job by has reached
        // its due time; a claim then would find nothing and the job would wait for the poll.
        if (this.o.clock.now() < dueAt) this.wakeAt(dueAt);
        else this.wake();
      },
      // setTimeout fires a longer delay than 2^31-1 ms after 1 ms (TimeoutOverflowWarning): the
      // re-arm above would then spin until the due time. Past that range it looks again then.
      Math.min(MAX_TIMER_MS, Math.max(1, dueAt - this.o.clock.now())),
    );
    timer.unref();
    this.dueTimers.add(timer);
  }

  private fill(): Promise<void> {
    if (!this.running || this.o.canClaim?.() === false) return Promise.resolve();
    // One claim at a time: a wake during a claim asks for another round after it.
    if (this.filling) {
      this.refill = true;
      return this.filling;
    }
    const filling = this.fillRounds().finally(() => {
      if (this.filling === filling) this.filling = undefined;
    });
    this.filling = filling;
    return filling;
  }

  private async fillRounds(): Promise<void> {
    do {
      this.refill = false;
      await this.recordUnrecorded();
      const free = this.concurrency - this.inFlight.size;
      if (free <= 0 || !this.running) return;
      let jobs: Job[];
      try {
        jobs = await this.o.jobs.claim(this.workerId, free, this.leaseMs);
        this.claimBusy = false;
      } catch (err) {
        const busy = this.o.isBusy?.(err) ?? false;
        if (!busy) this.o.logger.error({ err }, "could not claim jobs");
        // Once per stretch of a lock held elsewhere (a backup), not on every poll.
        else if (!this.claimBusy) this.o.logger.warn({ error: (err as Error).message }, "database busy; claiming jobs again on the next polls");
        this.claimBusy = busy;
        return;
      }
      if (!this.running) {
        // stop() came while the claim was under way: nothing of these jobs has started, and
        // none may start now. They go back to the queue at once, their attempt not counted.
        await this.giveBack(jobs);
        return;
      }
      if (jobs.length === 0 && this.inFlight.size === 0 && this.unrecorded.size === 0) this.settled(true);
      for (const job of jobs) {
        const p = this.execute(job).finally(() => {
          this.inFlight.delete(job.id);
          this.wake();
        });
        this.inFlight.set(job.id, p);
      }
    } while (this.refill);
  }

  private async giveBack(jobs: Job[]): Promise<void> {
    for (const job of jobs) {
      try {
        await this.o.jobs.finish(job, this.workerId, { state: "released" });
      } catch (err) {
        // Its lease runs out and it comes back with a later claim: only later than at once.
        this.o.logger.warn({ err, job_id: job.id }, "could not give back a job claimed while the runner stopped; its lease will bring it back");
      }
    }
  }

  private async execute(job: Job): Promise<void> {
    const { jobs, logger: baseLogger, clock } = this.o;
    const logger = baseLogger.child({ job_id: job.id, kind: job.kind, service_id: job.serviceId, attempt: job.attempts });
    const started = clock.now();
    const definition = this.byKind.get(job.kind);
    const ctx: JobContext = {
      logger,
      recordIntent: async (intent, o) => {
        // Past the shutdown grace no new call may be announced, let alone made.
        if (this.abandoned) throw new JobInterruptedError("the service has stopped; the job is left to its lease");
        // The fence before a charge: a worker that lost the job (paused past its lease) must not
        // buy what the worker now holding it will buy too.
        if (!(await jobs.setIntent(job.id, this.workerId, intent, o?.durable !== false))) throw new JobLeaseLostError();
      },
      clearIntent: async () => {
        if (!this.abandoned) await jobs.setIntent(job.id, this.workerId, null, false);
      },
    };
    let failure: { err: unknown } | undefined;
    let change: ServiceChange | undefined;
    try {
      if (!definition) throw new JobFailedError(`no handler for job kind "${job.kind}"`);
      // The payload was checked when the job was queued; a row from another release may differ.
      const payload = definition.payload.parse(job.payload);
      change = (await definition.handler({ ...job, payload }, ctx)) ?? undefined;
    } catch (err) {
      failure = { err };
    }
    const ms = clock.now() - started;
    if (this.abandoned) {
      // The store is closed or closing. Whatever happened upstream, the job is still `running`
      // under an expiring lease; the next process takes it back and checks before acting again.
      logger.warn({ outcome: failure ? "failed" : "succeeded", duration_ms: ms }, "job attempt ended after shutdown; not recorded, it resumes on restart");
      return;
    }
    await this.record(job.id, logger, failure ? this.failureSteps(job, failure.err, logger, ms) : this.successSteps(job, logger, ms, change));
    this.settled(false);
  }

  private successSteps(job: Job, logger: Logger, ms: number, change: ServiceChange | undefined): Step[] {
    return [
      async () => {
        const state = await this.o.jobs.finish(job, this.workerId, { state: "succeeded", change });
        logger.info({ outcome: "succeeded", duration_ms: ms }, "job attempt");
        if (state === undefined) logger.warn("the job's lease ran out and another worker holds it now; this attempt's outcome is not recorded");
      },
      () => this.o.observer?.attemptFinished?.(job, "succeeded", ms),
    ];
  }

  private failureSteps(job: Job, err: unknown, logger: Logger, ms: number): Step[] {
    const finish = (ending: JobEnding) => this.o.jobs.finish(job, this.workerId, ending);
    if (err instanceof JobInterruptedError) {
      return [
        async () => {
          await finish({ state: "released" });
          logger.info({ outcome: "released" }, "job attempt interrupted by shutdown; back in the queue");
        },
      ];
    }
    if (err instanceof JobLeaseLostError) {
      return [() => void logger.warn({ outcome: "lease_lost", duration_ms: ms }, "job attempt stopped before its call: another worker holds the job now")];
    }
    if (err instanceof JobSkippedError) {
      return [
        async () => {
          const change = this.o.skipRecord?.(job, err.message);
          const state = await finish({ state: "succeeded", skipped: err.message, ...(change ? { change } : {}) });
          logger.info({ outcome: "skipped", duration_ms: ms, reason: err.message }, "job attempt");
          if (state === undefined) logger.warn("the job's lease ran out and another worker holds it now; this attempt's outcome is not recorded");
        },
        () => this.o.observer?.attemptFinished?.(job, "skipped", ms),
      ];
    }
    if (err instanceof JobDeferredError) {
      const delayMs = Math.max(0, err.untilMs - this.o.clock.now());
      return [
        async () => {
          const state = await finish({ state: "deferred", error: err.message, delayMs, spent: err.spent });
          if (state === "queued") this.wakeAfter(delayMs);
          logger.warn({ outcome: "deferred", duration_ms: ms, error: err.message, retry_in_ms: delayMs }, "job attempt");
        },
        () => this.o.observer?.attemptFinished?.(job, "deferred", ms, err),
      ];
    }
    const verdict = judgeFailure(err);
    if (isProgrammingError(err)) logger.error({ err }, "job attempt hit a programming error; failed without retrying");
    let outcome: AttemptOutcome = "retry";
    // Set once the store has the job failed or blocked from this attempt. Not when this worker no
    // longer held it (its lease ran out and another worker took it): that worker's attempt
    // decides, and the service must not be marked failed (nor the operator alerted) behind it.
    let stopped: "failed" | "blocked" | undefined;
    return [
      async () => {
        let state: JobState | undefined;
        if (verdict.disposition === "retry") {
          const delay = backoffDelay(job.attempts, { baseMs: this.o.baseDelayMs, capMs: this.o.maxDelayMs });
          // A retry ends the job (failed) only on its last attempt, the store's own rule: only then
          // has the stop record anything to write, and the store a service row to lock for it.
          const last = job.attempts >= job.maxAttempts;
          const stop = last ? this.o.stopRecord?.(job, verdict.message) : undefined;
          state = await finish({ state: "retry", error: verdict.message, code: verdict.code, delayMs: delay, stop });
          outcome = state === "failed" ? "failed" : "retry";
          stopped = state === "failed" ? "failed" : undefined;
          if (state === "queued") this.wakeAfter(delay);
          logger[outcome === "failed" ? "error" : "warn"](
            { outcome, duration_ms: ms, error: verdict.message, retry_in_ms: outcome === "retry" ? delay : undefined },
            "job attempt",
          );
        } else {
          const ending = verdict.disposition === "block" ? "blocked" : "failed";
          outcome = ending;
          state = await finish({ state: ending, error: verdict.message, code: verdict.code, stop: this.o.stopRecord?.(job, verdict.message) });
          stopped = state === ending ? ending : undefined;
          logger.error({ outcome, duration_ms: ms, error: verdict.message }, "job attempt");
        }
        if (state === undefined) logger.warn("the job's lease ran out and another worker holds it now; this attempt's outcome is not recorded");
      },
      () => this.o.observer?.attemptFinished?.(job, outcome, ms, err),
      async () => {
        if (stopped) await this.o.observer?.jobStopped?.(job, stopped, verdict.message, err);
      },
    ];
  }

  /**
   * Records a finished attempt, step by step. A step that fails is tried again on each poll,
   * whatever the error (another process's write lock, a full disk, a dropped connection): a job
   * whose outcome was never written would stay `running` under this worker, which never takes
   * back its own jobs, until a restart. Its lease is kept meanwhile (the heartbeat goes on).
   */
  private async record(id: number, logger: Logger, steps: Step[], failures = 0): Promise<void> {
    while (steps.length > 0) {
      try {
        await steps[0]!();
        steps.shift();
      } catch (err) {
        if (!this.running) {
          // Stopping: the lease will run out and the job come back after a restart; nothing is lost.
          logger.error({ err }, "could not record the job's outcome");
          return;
        }
        const busy = this.o.isBusy?.(err) === true;
        // One line at the first failure, then one in sixty polls: a full disk must not flood the log.
        if (failures % 60 === 0) {
          if (busy) logger.warn({ error: (err as Error).message }, "database busy; recording the job's outcome on the next poll");
          else logger.error({ err }, "could not record the job's outcome; trying again on the next poll");
        }
        this.unrecorded.set(id, { logger, steps, failures: failures + 1 });
        return;
      }
    }
  }

  private async recordUnrecorded(): Promise<void> {
    for (const [id, { logger, steps, failures }] of [...this.unrecorded]) {
      this.unrecorded.delete(id);
      await this.record(id, logger, steps, failures);
      if (this.unrecorded.has(id)) return; // still failing: the others wait for the next poll too
    }
  }
}
