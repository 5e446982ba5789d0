import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type { Logger } from "../log/logger.js";
import type { ErrorCode } from "../http/error-codes.js";
import { ResellerError, type ResellerErrorKind } from "../reseller/errors.js";
import { isDatabaseBusy } from "../store/database.js";
import { backoffDelay } from "./backoff.js";
import type { Clock } from "./clock.js";
import { JobBlockedError, JobDeferredError, JobFailedError, JobInterruptedError } from "./errors.js";
import type { JobQueue } from "./queue.js";
import type { Job, JobState } from "./types.js";

export interface JobContext {
  logger: Logger;
  /**
   * Records that a call which may charge money is being made, and resolves once that record
   * is on disk (await it before the call). A later attempt that finds `job.intent` set must
   * check upstream before calling again. `durable: false` for bookkeeping whose loss only costs
   * a check: written at once, without waiting for an fsync.
   */
  recordIntent(intent: unknown, options?: { durable?: boolean }): Promise<void>;
  /** Clears the intent once the call is known not to have taken effect. */
  clearIntent(): void;
}

export type JobHandler = (job: Job, ctx: JobContext) => Promise<void>;

export type AttemptOutcome = "succeeded" | "retry" | "deferred" | "failed" | "blocked";

export interface RunnerObserver {
  attemptFinished?(job: Job, outcome: AttemptOutcome, durationMs: number, error?: unknown): void;
  /** A job ended failed or blocked: the place for service status, history and operator alerts. */
  jobStopped?(job: Job, state: Extract<JobState, "failed" | "blocked">, message: string, error: unknown): void;
}

export interface JobRunnerOptions {
  queue: JobQueue;
  handlers: Record<string, JobHandler>;
  logger: Logger;
  clock: Clock;
  /** Jobs (and so upstream calls) in flight at once. (Default: 8) */
  concurrency?: number;
  /** How often to look for due jobs when nothing wakes the runner. (Default: 500 ms) */
  pollMs?: number;
  /** Cap of the retry delay. (Default: 300000 ms) */
  maxDelayMs?: number;
  /** First retry delay, at most. (Default: 2000 ms) */
  baseDelayMs?: number;
  observer?: RunnerObserver;
  workerId?: string;
  /** Claim new jobs only while this says so (false: the database file is gone). (Default: always) */
  canClaim?: () => boolean;
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

type Verdict = { action: "retry" | "block" | "fail"; message: string; code: ErrorCode };

/** The stable code of a reseller error, for the provisioning API and the job list. */
const CODE_BY_KIND: Record<ResellerErrorKind, ErrorCode> = {
  insufficient_balance: "insufficient_balance",
  unauthorized: "upstream_unauthorized",
  forbidden: "upstream_refused",
  validation: "upstream_refused",
  not_found: "upstream_not_found",
  already_exists: "upstream_refused",
  unavailable: "upstream_unavailable",
  unexpected: "upstream_unavailable",
};

/**
 * One ordered list of rules deciding what a failed attempt means. First match wins.
 */
export function judgeFailure(err: unknown): Verdict {
  const message = err instanceof Error ? err.message : String(err);
  // The handler knows best.
  if (err instanceof JobBlockedError) return { action: "block", message, code: "needs_operator" };
  if (err instanceof JobFailedError) return { action: "fail", message, code: "job_failed" };
  if (err instanceof ResellerError) {
    const code = CODE_BY_KIND[err.kind];
    // No balance, a bad token, a forbidden call, or an upstream that rejects our data: retrying
    // burns attempts without any chance; the operator must act (then retry, or it heals itself).
    if (["insufficient_balance", "unauthorized", "forbidden", "validation"].includes(err.kind)) {
      return { action: "block", message, code };
    }
    // Timeouts, 5xx and connection failures pass; so may an answer we could not read.
    if (err.retryable || err.kind === "unexpected") return { action: "retry", message, code };
    return { action: "fail", message, code };
  }
  // Anything else is most likely transient (SQLITE_BUSY, a bug fixed by the next release): retry with backoff.
  return { action: "retry", message, code: "job_failed" };
}

/** One write of a finished attempt's bookkeeping, retried as a whole when the database is busy. */
type Step = () => void;

export class JobRunner {
  readonly workerId: string;
  private readonly inFlight = new Map<number, Promise<void>>();
  /** Finished attempts whose outcome could not be written yet (the database was busy). */
  private readonly unsettled = new Map<number, { logger: Logger; steps: Step[] }>();
  private claimBusy = false;
  /** Set when stop() gave up waiting: late endings of the jobs still running are not recorded. */
  private abandoned = false;
  private running = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private wakeScheduled = false;
  private unsubscribe: (() => void) | undefined;
  private readonly concurrency: number;

  constructor(private readonly o: JobRunnerOptions) {
    this.workerId = o.workerId ?? `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
    this.concurrency = o.concurrency ?? 8;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    try {
      const reclaimed = this.o.queue.reclaimFrom((w) => deadOnThisHost(w, this.workerId));
      if (reclaimed) this.o.logger.warn({ reclaimed }, "took back jobs of a process on this host that died while running them");
    } catch (err) {
      // Their leases run out and they come back with the next claims; only later than at once.
      this.o.logger.warn({ err }, "could not take back the jobs of dead processes now; their leases will bring them back");
    }
    this.unsubscribe = this.o.queue.onEnqueue(() => this.wake());
    this.pollTimer = setInterval(() => this.fill(), this.o.pollMs ?? 500);
    this.heartbeatTimer = setInterval(() => {
      if (this.inFlight.size === 0 && this.unsettled.size === 0) return;
      try {
        this.o.queue.heartbeat(this.workerId);
      } catch (err) {
        // Four beats per lease: one missed (the database busy) costs nothing. A timer must not throw.
        this.o.logger.warn({ err }, "could not extend the leases of running jobs");
      }
    }, Math.max(250, Math.floor(this.o.queue.leaseMs / 4)));
    this.fill();
  }

  /**
   * Stops claiming, waits up to `graceMs` for running jobs, and leaves the rest to lease expiry:
   * from then on the runner writes nothing for them (the database is about to be closed), and a
   * restart takes them back.
   */
  async stop(graceMs = 10_000): Promise<{ unfinished: number }> {
    this.running = false;
    clearInterval(this.pollTimer);
    this.unsubscribe?.();
    const all = Promise.allSettled([...this.inFlight.values()]);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    clearInterval(this.heartbeatTimer);
    if (this.inFlight.size > 0) this.abandoned = true;
    return { unfinished: this.inFlight.size };
  }


  private wake(): void {
    if (this.wakeScheduled || !this.running) return;
    this.wakeScheduled = true;
    // After the current transaction has committed and the caller has returned.
    setImmediate(() => {
      this.wakeScheduled = false;
      this.fill();
    });
  }

  private fill(): void {
    if (!this.running || this.o.canClaim?.() === false) return;
    this.settleDeferred();
    const free = this.concurrency - this.inFlight.size;
    if (free <= 0) return;
    let jobs: Job[];
    try {
      jobs = this.o.queue.claim(this.workerId, free);
      this.claimBusy = false;
    } catch (err) {
      if (!isDatabaseBusy(err)) this.o.logger.error({ err }, "could not claim jobs");
      // Once per stretch of a lock held elsewhere (a backup), not on every poll.
      else if (!this.claimBusy) this.o.logger.warn({ error: (err as Error).message }, "database busy; claiming jobs again on the next polls");
      this.claimBusy = isDatabaseBusy(err);
      return;
    }
    for (const job of jobs) {
      const p = this.execute(job).finally(() => {
        this.inFlight.delete(job.id);
        this.wake();
      });
      this.inFlight.set(job.id, p);
    }
  }

  private async execute(job: Job): Promise<void> {
    const { queue, logger: baseLogger, clock } = this.o;
    const logger = baseLogger.child({ job_id: job.id, kind: job.kind, service_id: job.serviceId, attempt: job.attempts });
    const started = clock.now();
    const handler = this.o.handlers[job.kind];
    const ctx: JobContext = {
      logger,
      recordIntent: async (intent, o) => {
        // Past the shutdown grace no new call may be announced, let alone made.
        if (this.abandoned) throw new JobInterruptedError("the service has stopped; the job is left to its lease");
        if (o?.durable === false) queue.setIntent(job.id, this.workerId, intent);
        else await queue.setIntentDurably(job.id, this.workerId, intent);
      },
      clearIntent: () => {
        if (!this.abandoned) queue.setIntent(job.id, this.workerId, null);
      },
    };
    let failure: { err: unknown } | undefined;
    try {
      if (!handler) throw new JobFailedError(`no handler for job kind "${job.kind}"`);
      await handler(job, ctx);
    } catch (err) {
      failure = { err };
    }
    const ms = clock.now() - started;
    if (this.abandoned) {
      // The database is closed or closing. Whatever happened upstream, the job is still `running`
      // under an expiring lease; the next process takes it back and checks before acting again.
      logger.warn({ outcome: failure ? "failed" : "succeeded", duration_ms: ms }, "job attempt ended after shutdown; not recorded, it resumes on restart");
      return;
    }
    this.settle(job.id, logger, failure ? this.failureSteps(job, failure.err, logger, ms) : this.successSteps(job, logger, ms));
  }

  private successSteps(job: Job, logger: Logger, ms: number): Step[] {
    return [
      () => {
        this.o.queue.succeed(job.id, this.workerId);
        logger.info({ outcome: "succeeded", duration_ms: ms }, "job attempt");
      },
      () => this.o.observer?.attemptFinished?.(job, "succeeded", ms),
    ];
  }

  private failureSteps(job: Job, err: unknown, logger: Logger, ms: number): Step[] {
    const { queue } = this.o;
    if (err instanceof JobInterruptedError) {
      return [
        () => {
          queue.release(job.id, this.workerId);
          logger.info({ outcome: "released" }, "job attempt interrupted by shutdown; back in the queue");
        },
      ];
    }
    if (err instanceof JobDeferredError) {
      return [
        () => {
          queue.defer(job.id, this.workerId, err.untilMs, err.message, err.spent);
          logger.warn({ outcome: "deferred", duration_ms: ms, error: err.message, retry_in_ms: Math.max(0, err.untilMs - this.o.clock.now()) }, "job attempt");
        },
        () => this.o.observer?.attemptFinished?.(job, "deferred", ms, err),
      ];
    }
    const verdict = judgeFailure(err);
    let outcome: AttemptOutcome = "retry";
    return [
      () => {
        if (verdict.action === "retry") {
          const delay = backoffDelay(job.attempts, { baseMs: this.o.baseDelayMs, capMs: this.o.maxDelayMs });
          const state = queue.retryLater(job, this.workerId, verdict.message, delay, verdict.code);
          outcome = state === "failed" ? "failed" : "retry";
          logger[outcome === "failed" ? "error" : "warn"](
            { outcome, duration_ms: ms, error: verdict.message, retry_in_ms: outcome === "retry" ? delay : undefined },
            "job attempt",
          );
        } else if (verdict.action === "block") {
          queue.block(job.id, this.workerId, verdict.message, verdict.code);
          outcome = "blocked";
          logger.error({ outcome, duration_ms: ms, error: verdict.message }, "job attempt");
        } else {
          queue.fail(job.id, this.workerId, verdict.message, verdict.code);
          outcome = "failed";
          logger.error({ outcome, duration_ms: ms, error: verdict.message }, "job attempt");
        }
      },
      () => this.o.observer?.attemptFinished?.(job, outcome, ms, err),
      () => {
        if (outcome === "failed" || outcome === "blocked") this.o.observer?.jobStopped?.(job, outcome, verdict.message, err);
      },
    ];
  }

  /**
   * Records a finished attempt, step by step. While another process holds the write lock, the
   * steps left are tried again on each poll: a job whose outcome was never written would stay
   * `running` under this worker, which never takes back its own jobs, until a restart.
   */
  private settle(id: number, logger: Logger, steps: Step[]): void {
    while (steps.length > 0) {
      try {
        steps[0]!();
        steps.shift();
      } catch (err) {
        if (isDatabaseBusy(err) && this.running) {
          logger.warn({ error: (err as Error).message }, "database busy; recording the job's outcome on the next poll");
          this.unsettled.set(id, { logger, steps });
        } else {
          // The lease will run out and the job come back: nothing is lost, only delayed.
          logger.error({ err }, "could not record the job's outcome");
        }
        return;
      }
    }
  }

  private settleDeferred(): void {
    for (const [id, { logger, steps }] of [...this.unsettled]) {
      this.unsettled.delete(id);
      this.settle(id, logger, steps);
      if (this.unsettled.has(id)) return; // still busy: the others wait for the next poll too
    }
  }
}
