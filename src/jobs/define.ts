import type { z } from "zod";
import type { NewJob, ServiceChange } from "../store/store.js";
import type { Logger } from "../log/logger.js";
import type { Job } from "../vocabulary/jobs.js";

/** What a handler gets beside its job: its logger, and the record of a charging call's intent. */
export interface JobContext {
  logger: Logger;
  /**
   * Records that a call which may charge money is being made, and resolves once that record
   * is on disk (await it before the call). A later attempt that finds `job.intent` set must
   * check upstream before calling again. `durable: false` for bookkeeping whose loss only costs
   * a check: written without waiting for an fsync.
   */
  recordIntent(intent: unknown, options?: { durable?: boolean }): Promise<void>;
  /** Clears the intent once the call is known not to have taken effect. */
  clearIntent(): Promise<void>;
}

/** A job as its handler sees it: the payload parsed by its kind's schema. */
export type TypedJob<P> = Omit<Job, "payload"> & { payload: P };

/** Where a job belongs: its service (and so its queue), and the event it serves. */
export interface JobTarget {
  serviceId?: string | null;
  /** Jobs with the same queue key run one at a time, in order. (Default: none) */
  queueKey?: string | null;
  eventId?: string | null;
  delayMs?: number;
}

/**
 * A kind of job (graphile-worker's task list, liteque's typed queue): its name, the schema its
 * payload must satisfy (checked when it is enqueued and again when it runs), and the format of
 * its unique key, so a second job with the same key is never created. Its handler is defined
 * beside it, in the same file, and joined to it with `defineJob`.
 */
export interface JobKind<P> {
  kind: string;
  payload: z.ZodType<P>;
  /** Makes enqueueing idempotent: e.g. one renewal per licence and term. (Default: none) */
  uniqueKey?(payload: P, where: JobTarget): string;
  /** Attempts before the job is failed. (Default: JOB_MAX_ATTEMPTS) */
  maxAttempts?: number;
}

/**
 * A handler may return its last write instead of making it: the store commits that change with
 * the job's ending, in one transaction, so no crash can leave the one without the other (and it
 * costs one commit less). A change of the job's own service only; anything else it writes itself.
 */
export type JobHandlerOf<P> = (job: TypedJob<P>, ctx: JobContext) => Promise<void | ServiceChange>;

export interface JobDefinition<P = unknown> extends JobKind<P> {
  // A method, so a definition of any payload type fits a list of JobDefinition<unknown>.
  handler(job: TypedJob<P>, ctx: JobContext): Promise<void | ServiceChange>;
}

export function jobKind<P>(kind: JobKind<P>): JobKind<P> {
  return kind;
}

export function defineJob<P>(kind: JobKind<P>, handler: JobHandlerOf<P>): JobDefinition<P> {
  return { ...kind, handler };
}

/** A job of `kind`, ready for the store: the payload checked, the unique key spelled by its kind. */
export function jobOf<P>(kind: JobKind<P>, payload: P, where: JobTarget = {}): NewJob {
  const checked = kind.payload.parse(payload);
  return {
    kind: kind.kind,
    payload: checked,
    serviceId: where.serviceId ?? null,
    queueKey: where.queueKey ?? null,
    eventId: where.eventId ?? null,
    uniqueKey: kind.uniqueKey ? kind.uniqueKey(checked, where) : null,
    ...(where.delayMs ? { delayMs: where.delayMs } : {}),
    ...(kind.maxAttempts ? { maxAttempts: kind.maxAttempts } : {}),
  };
}
