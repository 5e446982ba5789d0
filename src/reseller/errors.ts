import type { ErrorCode } from "../vocabulary/error-codes.js";
import type { Disposition } from "../jobs/errors.js";
import { redactSecrets } from "./redact.js";

/** The stable code of each kind, for the provisioning API and the job list. */
const CODE_BY_KIND: Readonly<Record<ResellerErrorKind, ErrorCode>> = {
  insufficient_balance: "insufficient_balance",
  unauthorized: "upstream_unauthorized",
  forbidden: "upstream_refused",
  validation: "upstream_refused",
  not_found: "upstream_not_found",
  already_exists: "upstream_refused",
  unavailable: "upstream_unavailable",
  unexpected: "upstream_unavailable",
};

/**
 * Errors of the reseller client, as values the job runner can act on. Two flags carry the
 * decisions: `retryable` (can asking again, without an operator, help?) and
 * `mayHaveTakenEffect` (may the upstream have applied the request although we got no usable
 * answer? then a charge must be reconciled with the licence list before it is sent again).
 */
export type ResellerErrorKind =
  | "unauthorized"
  | "insufficient_balance"
  | "not_found"
  | "validation"
  | "already_exists"
  | "forbidden"
  | "unavailable"
  | "unexpected";

export interface ResellerErrorInit {
  /** Which call failed, e.g. "v1.register" or "v2.changeCore". */
  operation: string;
  status?: number;
  upstreamMessage?: string;
  /** The answer body, already scrubbed of secrets. */
  raw?: unknown;
  /** Overrides the kind's default. */
  retryable?: boolean;
  /** Overrides the kind's default. */
  mayHaveTakenEffect?: boolean;
  cause?: unknown;
  /** Overrides the short fixed message. */
  message?: string;
}

interface Defaults {
  summary: string;
  retryable: boolean;
  mayHaveTakenEffect: boolean;
}

export class ResellerError extends Error {
  readonly kind: ResellerErrorKind;
  readonly operation: string;
  readonly status?: number;
  readonly retryable: boolean;
  readonly mayHaveTakenEffect: boolean;
  readonly upstreamMessage?: string;
  readonly raw?: unknown;

  /**
   * What a job that met this error should do. No balance, a bad token, a forbidden call or data
   * the upstream rejects: retrying burns attempts without a chance, so the operator must act
   * (then retry, or it heals itself). Timeouts, 5xx and connection failures are retried, and so
   * is an answer we could not read. Anything else cannot get better by itself.
   */
  get disposition(): Disposition {
    if (this.kind === "insufficient_balance" || this.kind === "unauthorized" || this.kind === "forbidden" || this.kind === "validation") return "block";
    if (this.retryable || this.kind === "unexpected") return "retry";
    return "fail";
  }

  get errorCode(): ErrorCode {
    return CODE_BY_KIND[this.kind];
  }

  /**
   * Whether the upstream may still be carrying the request out after this error, so that asking
   * its licence list now could miss an effect still to come: no answer came (a timeout, a lost
   * connection), or a gateway answered in the reseller's place (502, 504). An answer of the
   * reseller's own, a 5xx or one we could not read, means the call is over.
   */
  get mayStillTakeEffect(): boolean {
    return false;
  }

  protected constructor(kind: ResellerErrorKind, init: ResellerErrorInit, defaults: Defaults) {
    const status = init.status === undefined ? "" : ` (HTTP ${init.status})`;
    super(init.message ?? `${init.operation}: ${defaults.summary}${status}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.kind = kind;
    this.operation = init.operation;
    this.retryable = init.retryable ?? defaults.retryable;
    this.mayHaveTakenEffect = init.mayHaveTakenEffect ?? defaults.mayHaveTakenEffect;
    if (init.status !== undefined) this.status = init.status;
    if (init.upstreamMessage !== undefined) this.upstreamMessage = init.upstreamMessage;
    if (init.raw !== undefined) this.raw = init.raw;
  }
}

/** v1 401, v2 "Wrong token": the configured token is wrong; only an operator can fix it. */
export class UnauthorizedError extends ResellerError {
  declare readonly kind: "unauthorized";
  constructor(init: ResellerErrorInit) {
    super("unauthorized", init, { summary: "token rejected", retryable: false, mayHaveTakenEffect: false });
  }
}

/** v1 400 "Insufficient balance", v2 "Please charge your account": waits for a top-up. */
export class InsufficientBalanceError extends ResellerError {
  declare readonly kind: "insufficient_balance";
  constructor(init: ResellerErrorInit) {
    super("insufficient_balance", init, { summary: "insufficient balance", retryable: false, mayHaveTakenEffect: false });
  }
}

export class NotFoundError extends ResellerError {
  declare readonly kind: "not_found";
  constructor(init: ResellerErrorInit) {
    super("not_found", init, { summary: "not found", retryable: false, mayHaveTakenEffect: false });
  }
}

/**
 * The upstream (422, v2 "Invalid ...") or our own input check refused the request. When our
 * check refused it, nothing was sent: `status` is absent and `mayHaveTakenEffect` is false.
 */
export class ValidationError extends ResellerError {
  declare readonly kind: "validation";
  /** Field name → messages; "_" holds what belongs to no single field. */
  readonly errors: Record<string, string[]>;
  constructor(init: ResellerErrorInit & { errors?: Record<string, string[]> }) {
    const errors = init.errors ?? {};
    const fields = Object.keys(errors);
    super("validation", init, {
      summary: fields.length > 0 ? `invalid ${fields.join(", ")}` : "invalid request",
      retryable: false,
      mayHaveTakenEffect: false,
    });
    this.errors = errors;
  }
}

/** The licence is already there; after a lost answer this may be our own earlier request. */
export class AlreadyExistsError extends ResellerError {
  declare readonly kind: "already_exists";
  constructor(init: ResellerErrorInit) {
    super("already_exists", init, { summary: "already exists", retryable: false, mayHaveTakenEffect: false });
  }
}

/** v1 403, e.g. an admin call made with a reseller token. */
export class ForbiddenError extends ResellerError {
  declare readonly kind: "forbidden";
  constructor(init: ResellerErrorInit) {
    super("forbidden", init, { summary: "forbidden", retryable: false, mayHaveTakenEffect: false });
  }
}

export type UnavailableReason = "timeout" | "network" | "status" | "rate_limited";

/**
 * 5xx, 429, timeout, refused or dropped connection. Transient by nature, so retryable; but
 * unless the failure certainly came before the request left (refused, unknown host), the
 * upstream may have done the work.
 */
export class UpstreamUnavailableError extends ResellerError {
  declare readonly kind: "unavailable";
  readonly reason: UnavailableReason;
  /** The system error code (ECONNREFUSED, ECONNRESET, ...) of a network failure. */
  readonly code?: string;
  constructor(init: ResellerErrorInit & { reason: UnavailableReason; code?: string }) {
    const summary =
      init.reason === "timeout"
        ? "upstream timed out"
        : init.reason === "network"
          ? `upstream unreachable${init.code ? ` (${init.code})` : ""}`
          : init.reason === "rate_limited"
            ? "upstream rate limit"
            : "upstream unavailable";
    super("unavailable", init, { summary, retryable: true, mayHaveTakenEffect: true });
    this.reason = init.reason;
    if (init.code !== undefined) this.code = init.code;
  }

  override get mayStillTakeEffect(): boolean {
    if (!this.mayHaveTakenEffect) return false;
    if (this.reason === "timeout" || this.reason === "network") return true;
    return this.status === 502 || this.status === 504;
  }
}

/**
 * An answer we cannot use: a success body of unknown shape (the work was probably done, so
 * `mayHaveTakenEffect` defaults to true) or a status the contract does not name.
 */
export class UnexpectedAnswerError extends ResellerError {
  declare readonly kind: "unexpected";
  constructor(init: ResellerErrorInit) {
    super("unexpected", init, { summary: "unexpected answer", retryable: false, mayHaveTakenEffect: true });
  }
}

const BALANCE = /insufficient|balance|charge your account|funds/i;
const ALREADY_EXISTS = /already exist/i;

/** The human text of an answer body: `error`, `message`, or a plain-text/HTML body. */
export function upstreamMessageOf(body: unknown): string | undefined {
  if (typeof body === "string") return textOfPlainBody(body);
  if (body === null || typeof body !== "object" || Array.isArray(body)) return undefined;
  const record = body as Record<string, unknown>;
  for (const key of ["error", "message", "msg"]) {
    const value = record[key];
    if (typeof value === "string" && value.trim() !== "") return value.trim();
    if (value !== null && typeof value === "object" && typeof (value as { message?: unknown }).message === "string") {
      return (value as { message: string }).message;
    }
  }
  return undefined;
}

function textOfPlainBody(text: string): string | undefined {
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1];
  const plain = (title ?? text.replace(/<[^>]*>/g, " ")).replace(/\s+/g, " ").trim();
  return plain === "" ? undefined : plain.slice(0, 300);
}

/** v1's 422 `errors`: an object of field → message(s); anything else is kept under "_". */
export function fieldErrorsOf(body: unknown): Record<string, string[]> {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return {};
  const errors = (body as Record<string, unknown>).errors;
  if (errors === null || errors === undefined) return {};
  if (typeof errors === "string") return { _: [errors] };
  if (Array.isArray(errors)) return { _: errors.map(String) };
  if (typeof errors !== "object") return {};
  const out: Record<string, string[]> = {};
  for (const [field, value] of Object.entries(errors)) {
    out[field] = Array.isArray(value) ? value.map(String) : [String(value)];
  }
  return out;
}

/**
 * Chooses the error of a v1 answer from its status and body. `body` must already be scrubbed
 * of our token. Called for non-2xx answers and for a 2xx that says `success: false`.
 */
export function errorFromV1Answer(input: { operation: string; status: number; body: unknown }): ResellerError {
  const { operation, status, body } = input;
  const upstreamMessage = upstreamMessageOf(body);
  const fieldErrors = fieldErrorsOf(body);
  const init: ResellerErrorInit = { operation, status, upstreamMessage, raw: redactSecrets(body) };
  const texts = [upstreamMessage ?? "", ...Object.values(fieldErrors).flat()];
  const says = (pattern: RegExp): boolean => texts.some((text) => pattern.test(text));
  const success = status >= 200 && status < 300;

  // The first matching line decides; status outranks wording except where the contract
  // gives one status two meanings (400, 422).
  if (success) return errorFromV2Message({ operation, status, message: upstreamMessage ?? "", raw: init.raw, refused: true });
  if (status === 401) return new UnauthorizedError(init);
  if (status === 403) return new ForbiddenError(init);
  if (status === 404) return new NotFoundError(init);
  if (status === 402 || (status === 400 && says(BALANCE))) return new InsufficientBalanceError(init);
  if ((status === 400 || status === 409 || status === 422) && says(ALREADY_EXISTS)) return new AlreadyExistsError(init);
  if (status === 422 || (status === 400 && Object.keys(fieldErrors).length > 0)) {
    return new ValidationError({ ...init, errors: fieldErrors });
  }
  // A rate limit refuses the request before doing it.
  if (status === 429) return new UpstreamUnavailableError({ ...init, reason: "rate_limited", mayHaveTakenEffect: false });
  // A 5xx may come after the work was done (a crash while answering).
  if (status >= 500) return new UpstreamUnavailableError({ ...init, reason: "status" });
  // Any other 4xx is a refusal we do not understand; other statuses say nothing either way.
  return new UnexpectedAnswerError({ ...init, mayHaveTakenEffect: !(status >= 400 && status < 500) });
}

/**
 * Chooses the error from an upstream message: v2 answers `{"ok":"False","message":...}` at
 * HTTP 200, or a plain-text body. `refused` says the upstream explicitly reported failure,
 * so a message we cannot classify still means nothing was done.
 */
export function errorFromV2Message(input: {
  operation: string;
  message: string;
  status?: number;
  raw?: unknown;
  refused: boolean;
}): ResellerError {
  const { operation, message, refused } = input;
  const init: ResellerErrorInit = { operation, upstreamMessage: message, raw: input.raw };
  if (input.status !== undefined) init.status = input.status;
  const invalid = (field: string): ValidationError => new ValidationError({ ...init, errors: { [field]: [message] } });

  // Ordered: more specific wording first ("Invalid new IP" before "Invalid IP").
  if (/wrong token|invalid token|unauthori[sz]ed|authentication/i.test(message)) return new UnauthorizedError(init);
  if (BALANCE.test(message)) return new InsufficientBalanceError(init);
  if (ALREADY_EXISTS.test(message)) return new AlreadyExistsError(init);
  if (/not found|does not exist|no such/i.test(message)) return new NotFoundError(init);
  if (/forbidden|not allowed|permission denied/i.test(message)) return new ForbiddenError(init);
  if (/invalid new ?ip/i.test(message)) return invalid("newip");
  if (/invalid ip/i.test(message)) return invalid("ip");
  if (/invalid (license |licence |product )?type/i.test(message)) return invalid("type");
  if (/invalid billing ?cycle/i.test(message)) return invalid("billingcycle");
  if (/invalid core/i.test(message)) return invalid("core");
  if (/^invalid\b|validation/i.test(message)) return invalid("_");
  if (/service unavailable|temporarily unavailable|maintenance|try again later/i.test(message)) {
    return new UpstreamUnavailableError({ ...init, reason: "status", mayHaveTakenEffect: !refused });
  }
  return new UnexpectedAnswerError({ ...init, mayHaveTakenEffect: !refused });
}
