import { ServiceUnavailableError } from "../http/errors.js";
import type { Intake as AcceptEvents } from "./intake.js";

/** Seconds a panel should wait before sending again when the database file is gone (only a restart brings it back). */
const LOST_RETRY_AFTER_SECONDS = 60;

/**
 * The intake as every webhook route uses it: refuses with 503 and Retry-After, never a 202,
 * while the database file is not the one the service has open (`databaseLost` says why). The
 * panel keeps the event and sends it again.
 */
export function guardAccept(accept: AcceptEvents, databaseLost: () => string | undefined): AcceptEvents {
  return async (...args) => {
    if (databaseLost()) {
      throw new ServiceUnavailableError("the database is unavailable; send the event again later", LOST_RETRY_AFTER_SECONDS);
    }
    return accept(...args);
  };
}
