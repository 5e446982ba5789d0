import type { ErrorCode } from "../vocabulary/error-codes.js";

/**
 * What a failed attempt means for its job. An error carries its own: the runner reads it and
 * knows nothing of reseller or mail errors (stripe-node's typed errors, by disposition).
 * - retry: try again after a backoff; `failed` once the attempts are used up
 * - block: wait for the operator (or a later automatic retry); no attempts burnt
 * - fail: retrying can never help
 */
export type Disposition = "retry" | "block" | "fail";

/** An error that says what should happen to the job it ended. */
export interface DisposedError {
  readonly disposition: Disposition;
  /** Why, as a stable code (src/vocabulary/error-codes.ts). */
  readonly errorCode: ErrorCode;
}

export function isDisposed(err: unknown): err is Error & DisposedError {
  return err instanceof Error && typeof (err as Partial<DisposedError>).disposition === "string" && typeof (err as Partial<DisposedError>).errorCode === "string";
}

/** Thrown by a handler when the job cannot succeed without the operator (or a later automatic retry). */
export class JobBlockedError extends Error implements DisposedError {
  readonly disposition = "block";
  readonly errorCode: ErrorCode;
  constructor(message: string, code: ErrorCode = "needs_operator") {
    super(message);
    this.name = "JobBlockedError";
    this.errorCode = code;
  }
}

/** Thrown by a handler when retrying can never help. */
export class JobFailedError extends Error implements DisposedError {
  readonly disposition = "fail";
  readonly errorCode: ErrorCode;
  constructor(message: string, code: ErrorCode = "job_failed") {
    super(message);
    this.name = "JobFailedError";
    this.errorCode = code;
  }
}

/** A transient trouble worth another attempt (e.g. a mail server that did not answer). */
export class JobRetryError extends Error implements DisposedError {
  readonly disposition = "retry";
  readonly errorCode: ErrorCode;
  constructor(message: string, code: ErrorCode = "job_failed", options?: { cause?: unknown }) {
    super(message, options);
    this.name = "JobRetryError";
    this.errorCode = code;
  }
}

/**
 * The job must not do its work, and never will: what it was for no longer holds (a renewal of a
 * service that is being terminated). Not a failure: the job ends succeeded, recorded as skipped
 * with the reason, and gives up its unique key so the same work can be queued again if it
 * becomes due again (the service unsuspended).
 */
export class JobSkippedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JobSkippedError";
  }
}

/** The job was stopped before it did anything upstream (shutdown): back to the queue, no attempt spent. */
export class JobInterruptedError extends Error {
  constructor(message = "the service is shutting down; the job goes back to the queue") {
    super(message);
    this.name = "JobInterruptedError";
  }
}

/**
 * This worker no longer holds the job (its lease ran out, as after a long pause, and another
 * worker may run it now), found before a charging call was announced: nothing was sent, and
 * nothing of this attempt is recorded. The holder's attempt decides.
 */
export class JobLeaseLostError extends Error {
  constructor(message = "the job's lease ran out and another worker may hold it now; its call was not made") {
    super(message);
    this.name = "JobLeaseLostError";
  }
}

/**
 * The job must wait until `untilMs` before it may do anything (e.g. the reseller may still be
 * working on a charge whose answer was lost). It goes back to the queue due at that time; this
 * is not a failure, so it never fails the job. `spent`: whether this attempt counts toward
 * the job's attempts (it made a call) or not (it only found that it must wait).
 */
export class JobDeferredError extends Error {
  constructor(
    readonly untilMs: number,
    message: string,
    readonly spent: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "JobDeferredError";
  }
}

/** Errors of the code itself, not of the world: another attempt would only repeat them. */
export function isProgrammingError(err: unknown): boolean {
  return err instanceof TypeError || err instanceof ReferenceError || err instanceof SyntaxError || err instanceof RangeError;
}
