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
