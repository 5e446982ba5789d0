import {
  AlreadyExistsError,
  ForbiddenError,
  InsufficientBalanceError,
  NotFoundError,
  UnauthorizedError,
  UnexpectedAnswerError,
  UpstreamUnavailableError,
  ValidationError,
  upstreamMessageOf,
  type ResellerError,
  type ResellerErrorInit,
} from "../../reseller/errors.js";
import { redactSecrets } from "../../reseller/redact.js";

/**
 * Manage2's failures as the one error hierarchy the job runner and `callOnce` act on.
 *
 * - A function that fails answers HTTP 200 with `status` 0 (or -1 in the legacy pages) and a
 *   `reason` (docs.cpanel.net/manage2/knowledge-base/manage2-return-data/; the twiki pages of
 *   ExpireLicense and XMLReactivateLicense for -1). Only "Empty license." is public as a reason
 *   (Upmind's provision-provider-software-licenses, src/Providers/CPanel/Provider.php), so the
 *   rest is read by its words, and a reason we cannot place is a refusal, never a success.
 * - Authentication fails with HTTP 401 (Upmind commit f1003d2); cPanel's PHP class 3.13 treats
 *   any status but 200 as a failure.
 * - The docs' own XMLtransfer example answers `status` 0 with the success text "Transferred …":
 *   such an answer is an error, but one that may have taken effect, so the caller looks before
 *   it acts again.
 */

/** The wording of Manage2's success reasons (the function pages' examples). */
const SUCCESS_WORDING = /^\s*(activated|expired|reactivated|transferred|updated)\b/i;
const NOT_FOUND = /^empty license\.?$|not found|no such|does not exist|no (active |expired )?licen[cs]e/i;
const ALREADY = /\balready\b/i;
const MONEY = /balance|funds|credit limit|accept (the )?charges?|payment|billing information/i;
/** Only a person can help: a licence cPanel suspended, a right the account lacks. */
const REFUSED = /access ip|not allowed|permission|denied|not authori[sz]ed|partner does not have|ability to upgrade|suspended by cpanel|contact (cpanel|support)/i;
const INVALID = /invalid|must\b|exceed|too long|required|missing|not (a )?valid/i;

/** The parameter a refusal's words point at, most specific first. */
const FIELDS: ReadonlyArray<[RegExp, string]> = [
  [/external_notes|notes/i, "external_notes"],
  [/newip|new ip/i, "newip"],
  [/oldip|old ip/i, "oldip"],
  [/newpackageid|new package/i, "newpackageid"],
  [/oldpackageid|old package/i, "oldpackageid"],
  [/packageid|package/i, "packageid"],
  [/groupid|group/i, "groupid"],
  [/expcode/i, "expcode"],
  [/liscid|license id|licence id/i, "liscid"],
  [/\bip\b|ip address/i, "ip"],
];

/**
 * The error of an answer whose `status` is not 1. `readOnly` says the call changes nothing
 * (then nothing can have taken effect, whatever the answer).
 */
export function errorFromManage2Status(input: { operation: string; status: number | undefined; reason: string | undefined; body: unknown; readOnly: boolean }): ResellerError {
  const { operation, reason } = input;
  const said = reason?.trim() || undefined;
  const statusText = input.status === undefined ? "no status" : `status ${input.status}`;
  const init: ResellerErrorInit = {
    operation,
    status: 200,
    raw: redactSecrets(input.body),
    message: `${operation}: ${said ?? "no reason given"} (Manage2 ${statusText})`,
    ...(said === undefined ? {} : { upstreamMessage: said }),
  };
  if (said === undefined) return new UnexpectedAnswerError({ ...init, mayHaveTakenEffect: false });
  if (SUCCESS_WORDING.test(said) && !input.readOnly) {
    // Contradictory: reads like done, says failed. Money first: look before acting again.
    return new UnexpectedAnswerError({ ...init, mayHaveTakenEffect: true });
  }
  if (NOT_FOUND.test(said) && !ALREADY.test(said)) return new NotFoundError(init);
  if (ALREADY.test(said)) return new AlreadyExistsError(init);
  if (MONEY.test(said)) return new InsufficientBalanceError(init);
  if (REFUSED.test(said)) return new ForbiddenError(init);
  if (INVALID.test(said)) {
    const field = FIELDS.find(([words]) => words.test(said))?.[1] ?? "_";
    return new ValidationError({ ...init, errors: { [field]: [said] } });
  }
  // Manage2 said no, in words we do not know: nothing was done.
  return new UnexpectedAnswerError({ ...init, mayHaveTakenEffect: false });
}

/** The error of an answer with an HTTP status other than 200; `body` already scrubbed. */
export function errorFromManage2Http(input: { operation: string; status: number; body: unknown; readOnly: boolean }): ResellerError {
  const { operation, status, body } = input;
  const upstreamMessage = upstreamMessageOf(body);
  const init: ResellerErrorInit = { operation, status, raw: redactSecrets(body), ...(upstreamMessage === undefined ? {} : { upstreamMessage }) };
  if (status === 401) return new UnauthorizedError({ ...init, message: `${operation}: Manage2 rejected the user and password (HTTP 401)` });
  // Manage2 serves only its Access IPs; what it answers others is not public, a 403 is read so.
  if (status === 403) return new ForbiddenError({ ...init, message: `${operation}: Manage2 refused the call (HTTP 403${upstreamMessage ? `: ${upstreamMessage}` : ""})` });
  if (status === 429) return new UpstreamUnavailableError({ ...init, reason: "rate_limited", mayHaveTakenEffect: false });
  if (status >= 500) return new UpstreamUnavailableError({ ...init, reason: "status" });
  // A 2xx other than 200 is not Manage2's answer; a change may be behind it. Any other 4xx refused the request.
  const maybeDone = !input.readOnly && status >= 200 && status < 300;
  return new UnexpectedAnswerError({ ...init, mayHaveTakenEffect: maybeDone });
}
