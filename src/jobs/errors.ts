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
