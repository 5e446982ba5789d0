import type { Job, JobState } from "../../vocabulary/jobs.js";
import type { CancelRefusal } from "../cancel-rules.js";
import type { Page, PageRequest } from "../paging.js";
import type { ServiceRow } from "../service-row.js";
import type { AuditDraft } from "./audit.js";
import type { NewJob, ServiceChange } from "./writes.js";

export interface JobFilter {
  state?: JobState;
  serviceId?: string;
  kind?: string;
  limit?: number;
}

/** Which jobs a page lists, newest first. */
export type JobQuery = Omit<JobFilter, "limit"> & PageRequest;

/** How far the queue is behind: what /metrics, GET /admin/queue and the lag alert read. */
export interface QueueState {
  /** Jobs queued (due now, or waiting for a retry's time), by kind. */
  queued: Record<string, number>;
  /**
   * When the job that has waited longest to start was due (run_at), of the jobs that could start
   * now (due, and not waiting behind an earlier job of their queue); null when none waits.
   */
  oldestDueAt: number | null;
  /** How long that is ago, on the store's clock (0 when none waits). */
  oldestDueAgeMs: number;
}

/**
 * What a job that stops (failed, or blocked for the operator) writes to its service: decided
 * from the service row as it is inside the transaction that records the stop, and committed
 * with it, so no crash can leave a stopped job behind a service that does not show it.
 */
export type StopRecord = (state: "failed" | "blocked", service: ServiceRow) => Omit<ServiceChange, "serviceId" | "ifUpdatedAt" | "enqueue"> | undefined;

/** How an attempt ended, as the runner records it. */
export type JobEnding =
  /**
   * `change`: the handler's last write (the service's new state, its history, the event's outcome), committed with the ending.
   * `skipped`: the job did nothing, and why; it gives up its unique key, so the same work may be queued again later.
   */
  | { state: "succeeded"; change?: ServiceChange; skipped?: string }
  /** Another attempt after `delayMs`, or `failed` when the attempts are used up (then `stop` applies). */
  | { state: "retry"; error: string; code: string | null; delayMs: number; stop?: StopRecord }
  | { state: "blocked" | "failed"; error: string; code: string | null; stop?: StopRecord }
  /** Wait `delayMs` without failing; `spent: false` gives the attempt back. */
  | { state: "deferred"; error: string; delayMs: number; spent: boolean }
  /** Interrupted before doing anything: queued again at once, attempt not counted. */
  | { state: "released" };

/** How an operator's cancel ended: the job as cancelled, or why not (cancel-rules.ts). */
export type JobCancel = { cancelled: Job } | { refused: CancelRefusal; job: Job | undefined };

export interface JobOps {
  enqueue(job: NewJob): Promise<{ id: number; created: boolean }>;
  /** Leases up to `limit` runnable jobs (due, and first unfinished of their queue) to `worker`. */
  claim(worker: string, limit: number, leaseMs: number): Promise<Job[]>;
  /** Puts back the running jobs of workers `isDead` says are gone; returns how many. */
  reclaimFrom(isDead: (worker: string) => boolean): Promise<number>;
  heartbeat(worker: string, leaseMs: number): Promise<void>;
  /**
   * Records the intent of a call that may charge; `durable` waits for the fsync. Returns false,
   * writing nothing, when `worker` no longer holds the job (its lease ran out and it was taken
   * back): then the call must not be made.
   */
  setIntent(id: number, worker: string, intent: unknown, durable: boolean): Promise<boolean>;
  /** Records how an attempt ended (if `worker` still holds the job); returns the state it is left in. */
  finish(job: Pick<Job, "id" | "attempts" | "maxAttempts" | "serviceId">, worker: string, ending: JobEnding): Promise<JobState | undefined>;
  /** Blocked jobs of `kind` unchanged for `olderThanMs` go back to the queue, attempts kept. */
  requeueBlocked(kind: string, olderThanMs: number): Promise<number>;
  /**
   * The operator's retry of a failed or blocked job: queued again with fresh attempts. With
   * `audit`, the entry is written in the same transaction: ok with the job and its service, or
   * refused (no such job, or a job neither failed nor blocked; then nothing else is written).
   */
  retry(id: number, audit?: AuditDraft): Promise<Job | undefined>;
  /**
   * The operator's cancel of a failed or blocked job with no charge intent: it ends `cancelled`,
   * runs no more, holds its queue no longer, and gives up its unique key (as a skipped job does,
   * so the same work, a renewal's term, may be queued again when it is wanted again). In the
   * same transaction: the audit entry (ok with the job and its service, or refused, alone, saying
   * why), the service's history entry, and the event's outcome (`skipped`) if it had none yet.
   */
  cancel(id: number, audit: AuditDraft): Promise<JobCancel>;
  get(id: number): Promise<Job | undefined>;
  /** Up to `limit` jobs (default 500), newest first, for tests and small internal look-ups; listings use `page`. */
  list(filter?: JobFilter): Promise<Job[]>;
  /** One page of the jobs, newest first. */
  page(query: JobQuery): Promise<Page<Job>>;
  /** Jobs by state, from the counters kept with the writes: a few rows, however many jobs there are. */
  counts(): Promise<Record<JobState, number>>;
  queue(): Promise<QueueState>;
  unfinished(queueKey: string): Promise<Job[]>;
}
