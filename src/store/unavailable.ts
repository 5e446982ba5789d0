import { ServiceUnavailableError } from "../http/errors.js";

/** How long a client should wait before it sends a refused write again: a restart's time. */
export const LOST_RETRY_AFTER_SECONDS = 60;

/**
 * A store that has lost its database refuses the operation: SQLite's file was deleted or replaced
 * under the running service (every write is refused, see sqlite/write-guard.ts), or PostgreSQL's
 * database is gone. Nothing was written. Whichever route asked answers 503 with Retry-After (it is
 * a ServiceUnavailableError), so a panel keeps its event and an operator tries again after the
 * restart. `reason` says what happened, for the log (as the cause), never in the answer.
 */
export class StoreUnavailableError extends ServiceUnavailableError {
  constructor(
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super("the database is unavailable; try again later", LOST_RETRY_AFTER_SECONDS, { cause: options?.cause ?? reason });
    this.name = "StoreUnavailableError";
  }
}
