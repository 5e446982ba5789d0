/** Thrown by a handler when the job cannot succeed without the operator (or a later automatic retry). */
export class JobBlockedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JobBlockedError";
  }
}

/** Thrown by a handler when retrying can never help. */
export class JobFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JobFailedError";
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
