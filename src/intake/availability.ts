import { ServiceUnavailableError } from "../http/errors.js";
import type { Intake } from "./intake.js";

/** Why the service takes no event now, and when to send it again. */
export interface Unavailable {
  message: string;
  retryAfterSeconds: number;
}

/**
 * The intake as every webhook route and the provisioning API use it: refuses with 503 and
 * Retry-After, never a 202, while `unavailable` says why (the service is shutting down). The
 * panel keeps the event and sends it again. (A store that has lost its database refuses the
 * intake's write itself, with the same answer: StoreUnavailableError.)
 */
export function guardAccept(accept: Intake, unavailable: () => Unavailable | undefined): Intake {
  return async (...args) => {
    const why = unavailable();
    if (why) throw new ServiceUnavailableError(why.message, why.retryAfterSeconds);
    return accept(...args);
  };
}
