import {
  AlreadyExistsError,
  ForbiddenError,
  InsufficientBalanceError,
  NotFoundError,
  UnauthorizedError,
  UnexpectedAnswerError,
  UpstreamUnavailableError,
  ValidationError,
  type ResellerError,
  type ResellerErrorInit,
} from "../../reseller/errors.js";

/**
 * The error a `success: false` answer stands for, in the one hierarchy the job runner reads.
 * CLN publishes none of its failure texts (REST API: "a non-successful response in any other
 * cases"), so the wording is matched loosely, in order, and the message is always carried: the
 * XML-RPC API's names ("Not authorized", "Invalid call arguments", "Invalid IP format") and what
 * the sandbox answers. An explicit refusal did nothing, except a server error, which may come
 * after a change was made.
 */

type Make = (init: ResellerErrorInit, message: string) => ResellerError;

const invalid = (field: string): Make => (init, message) => new ValidationError({ ...init, errors: { [field]: [message] } });

const RULES: ReadonlyArray<readonly [RegExp, Make]> = [
  [/not authori[sz]ed|unauthori[sz]ed|authenticat|invalid token|token (is )?(expired|invalid)|wrong (login|token)/i, (init) => new UnauthorizedError(init)],
  [/balance|insufficient funds|payment required|add funds/i, (init) => new InsufficientBalanceError(init)],
  [/already|another (customer|user|account)|owned by|in use|taken/i, (init) => new AlreadyExistsError(init)],
  [/invalid ip|ip (address )?(is )?(not valid|invalid)|up to 100/i, invalid("ip")],
  [/type_to/i, invalid("typeTo")],
  [/invalid (license |licence )?type|unknown (license |licence )?type|type .*(not supported|unsupported)/i, invalid("type")],
  [/invalid|required|missing/i, invalid("_")],
  [/not found|no such|does not exist/i, (init) => new NotFoundError(init)],
  [/forbidden|not allowed|permission|denied/i, (init) => new ForbiddenError(init)],
];

const SERVER_TROUBLE = /unexpected server error|internal|temporar|unavailable|maintenance|try again/i;

export function errorFromClnRefusal(input: { operation: string; status: number; message: string; change: boolean; raw?: unknown }): ResellerError {
  const { operation, status, change } = input;
  const message = input.message.trim();
  const said = message === "" ? "refused without a message" : message;
  const init: ResellerErrorInit = {
    operation,
    status,
    upstreamMessage: message,
    raw: input.raw,
    message: `${operation}: ${said}${status === 200 ? "" : ` (HTTP ${status})`}`,
  };
  if (SERVER_TROUBLE.test(message) || (status >= 500 && !RULES.some(([pattern]) => pattern.test(message)))) {
    return new UpstreamUnavailableError({ ...init, reason: "status", mayHaveTakenEffect: change });
  }
  for (const [pattern, make] of RULES) if (pattern.test(message)) return make(init, said);
  return new UnexpectedAnswerError({ ...init, mayHaveTakenEffect: false });
}
