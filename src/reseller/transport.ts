import { silentLogger, type Logger } from "../log/logger.js";
import { createConnectionPool, ExchangeFailure, type ConnectionPool, type ExchangeAnswer, type ExchangePhase } from "./connection-pool.js";
import { ResellerError, UnexpectedAnswerError, UpstreamUnavailableError, type ResellerErrorKind } from "./errors.js";
import { readBody, streamedBody, type Answer } from "./answer-body.js";
import type { JsonStream } from "./list-json.js";
import { withoutUrlCredentials } from "../log/url-credentials.js";
import { redactSecrets, scrubText, scrubUrl } from "./redact.js";

export type { Answer } from "./answer-body.js";

/**
 * The one place that talks HTTP to the reseller: timeouts, logging, scrubbing and retries, over
 * the kept-alive connections of a ConnectionPool.
 */

export interface RetryOptions {
  /** Further tries after the first. (Default: 2) */
  maxRetries: number;
  /** First backoff; doubles per try, capped at `maxDelayMs`, with jitter. (Default: 250) */
  baseDelayMs: number;
  /** (Default: 2000) */
  maxDelayMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
/** A licence list of tens of thousands of licences fits; a broken upstream streaming without end does not. */
export const DEFAULT_MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/**
 * The licence list grows with the book, a couple of hundred bytes a licence: 100,000 licences
 * (issue 25's scale, bench:scale) do not fit in 4 MiB; 64 MiB holds about 300,000.
 */
export const DEFAULT_LICENSE_LIST_MAX_ANSWER_BYTES = 64 * 1024 * 1024;
export const DEFAULT_RETRY: Readonly<Required<RetryOptions>> = { maxRetries: 2, baseDelayMs: 250, maxDelayMs: 2_000 };

export interface TransportOptions {
  /** Scrubbed from every URL, body and log line. */
  token: string;
  /** Per attempt, all of it: waiting for a connection, connecting, sending, the whole answer. (Default: 10000) */
  timeoutMs?: number;
  /** Each attempt is logged at debug level. (Default: silent) */
  logger?: Logger;
  retry?: Partial<RetryOptions>;
  /** Connections shared with other transports; whoever created it closes it. (Default: one of its own, closed by `close()`) */
  pool?: ConnectionPool;
  /** A longer answer is refused as unexpected, so a broken upstream cannot fill memory. (Default: 4 MiB) */
  maxAnswerBytes?: number;
}

export interface Call {
  /** Names the call in logs and errors, e.g. "v1.register". */
  operation: string;
  method: "GET" | "POST";
  url: URL;
  headers?: Record<string, string>;
  /** Serialised as the JSON request body. */
  json?: unknown;
  /** Sent as an application/x-www-form-urlencoded body when there is no `json` (Manage2 reads a POST's form only). */
  form?: URLSearchParams;
  /** True when the call changes nothing upstream, so repeating it after it was sent is safe. */
  readOnly: boolean;
  /** This call's own limit, for an answer known to be large (the licence list). (Default: the transport's) */
  maxAnswerBytes?: number;
  /**
   * A parser a successful (2xx) JSON answer is pushed through as it arrives, in place of
   * JSON.parse of the whole text, throwing where JSON.parse would: the licence list, tens of MB,
   * is never held whole, and keeps only a record of each licence as it is read. One per attempt.
   * (Default: the answer collected whole, then JSON.parse)
   */
  streamJson?: () => JsonStream;
  /**
   * Scrubbed from this call's URL, answer, errors and log lines, beside the transport's own: a
   * credential made for one call (CLN's token, derived from its secret key and the time).
   * (Default: none)
   */
  secrets?: readonly string[];
}

export interface Transport {
  /** Resolves with any HTTP answer (the caller classifies statuses); rejects with a ResellerError. */
  send(call: Call): Promise<Answer>;
  /** Closes the transport's own connections; a `pool` passed in is left to its owner. */
  close(): Promise<void>;
  /** A token to scrub too (a rotated one; the old one stays scrubbed, answers may still quote it). */
  addSecret(secret: string): void;
}

/** How one upstream call (its retries included) ended, for metrics and a one-line log; never a body. */
export interface UpstreamCallReport {
  /** e.g. "v1.register". */
  operation: string;
  method: "GET" | "POST";
  /** HTTP status of the last answer, when one came. */
  status?: number;
  /** "ok", the ResellerError kind, or "error" for anything else. */
  outcome: "ok" | ResellerErrorKind | "error";
  durationMs: number;
}

export interface UpstreamObserver {
  callFinished?(report: UpstreamCallReport): void;
}

/**
 * Runs one upstream call (send and the check of its answer) and reports how it ended to
 * `observer`. An observer that throws is ignored: watching must never break a call.
 */
export async function observeCall(
  observer: UpstreamObserver | undefined,
  operation: string,
  method: "GET" | "POST",
  run: () => Promise<Answer>,
): Promise<Answer> {
  if (!observer?.callFinished) return run();
  const started = performance.now();
  const report = (outcome: UpstreamCallReport["outcome"], status: number | undefined) => {
    try {
      observer.callFinished?.({ operation, method, outcome, durationMs: performance.now() - started, ...(status === undefined ? {} : { status }) });
    } catch {
      // A broken observer is not a failed call.
    }
  };
  try {
    const answer = await run();
    report("ok", answer.status);
    return answer;
  } catch (error) {
    if (error instanceof ResellerError) report(error.kind, error.status);
    else report("error", undefined);
    throw error;
  }
}

export interface AttemptResult {
  call: Call;
  retriesSoFar: number;
  maxRetries: number;
  answer?: Answer;
  error?: ResellerError;
}

const transientStatus = (status: number): boolean => status >= 500 || status === 429;

/**
 * When to try again, in order; the first rule with an opinion decides, and no opinion means
 * stop. The job runner above retries with its own, longer backoff, so this only smooths
 * over blips and never risks doing a paid change twice.
 */
const RETRY_RULES: ReadonlyArray<(attempt: AttemptResult) => "retry" | "stop" | undefined> = [
  // The budget is small and fixed: a caller waiting on a dead upstream should hear so soon.
  (a) => (a.retriesSoFar >= a.maxRetries ? "stop" : undefined),
  // An answer that is not a transient fault (2xx, 4xx) would only be repeated by asking again.
  (a) => (a.answer && !transientStatus(a.answer.status) ? "stop" : undefined),
  // Nothing reached the upstream (refused, unknown host, no connection or no free slot in
  // time, a TLS handshake that failed), so even a charge cannot happen twice.
  (a) => (a.error instanceof UpstreamUnavailableError && !a.error.mayHaveTakenEffect ? "retry" : undefined),
  // A charge or change that may have been applied must not be resent blindly: the caller has
  // to look at the licence list first.
  (a) => (a.call.readOnly ? undefined : "stop"),
  // A read changes nothing, and timeouts, dropped connections, 5xx and 429 often pass quickly.
  (a) => (a.error instanceof UpstreamUnavailableError || (a.answer && transientStatus(a.answer.status)) ? "retry" : undefined),
];

export function shouldRetry(attempt: AttemptResult): boolean {
  for (const rule of RETRY_RULES) {
    const verdict = rule(attempt);
    if (verdict !== undefined) return verdict === "retry";
  }
  return false;
}

/** Capped exponential backoff with jitter, so many workers do not retry in lockstep. */
export function backoffDelayMs(retriesSoFar: number, retry: Required<RetryOptions>): number {
  const ceiling = Math.min(retry.maxDelayMs, retry.baseDelayMs * 2 ** retriesSoFar);
  return Math.round(ceiling * (0.5 + Math.random() * 0.5));
}

const LOGGED_TEXT_LIMIT = 2_000;

export function createTransport(options: TransportOptions): Transport {
  const ownSecrets = [options.token];
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxAnswerBytes = options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
  const logger = options.logger ?? silentLogger();
  const retry: Required<RetryOptions> = { ...DEFAULT_RETRY, ...options.retry };
  const pool = options.pool ?? createConnectionPool();

  async function attempt(call: Call, attemptNo: number): Promise<Answer> {
    const secrets = call.secrets === undefined ? ownSecrets : [...ownSecrets, ...call.secrets];
    const limit = call.maxAnswerBytes ?? maxAnswerBytes;
    // The URL scrub and the walk over the body are only worth doing for a line that is written.
    const debug = logger.isLevelEnabled("debug");
    const url = debug ? scrubUrl(call.url.toString(), secrets) : "";
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    const form = call.json === undefined ? call.form : undefined;
    const formType: Record<string, string> = form ? { "Content-Type": "application/x-www-form-urlencoded" } : {};
    const headers: Record<string, string> = { "User-Agent": "license-bridge", Accept: "*/*", ...formType, ...call.headers };
    const body = call.json === undefined ? form?.toString() : JSON.stringify(call.json);
    const streamJson = call.streamJson;
    const sinkFor = streamJson
      ? (status: number, contentType: string | undefined) => (status >= 200 && status < 300 ? streamedBody(status, contentType ?? null, secrets, streamJson()) : undefined)
      : undefined;
    let exchanged: ExchangeAnswer<Answer> | undefined;
    for (let freshConnection = false; exchanged === undefined; freshConnection = true) {
      try {
        // One deadline for the attempt, a second connection included.
        const left = Math.max(1, Math.round(timeoutMs - (performance.now() - started)));
        exchanged = await pool.exchange<Answer>({ url: call.url, method: call.method, headers, body, timeoutMs: left, maxAnswerBytes: limit, freshConnection, ...(sinkFor ? { sinkFor } : {}) });
      } catch (cause) {
        if (!freshConnection && cause instanceof ExchangeFailure && sendAgainOnNewConnection(cause, call)) {
          if (debug) {
            logger.debug(
              { operation: call.operation, method: call.method, url, attempt: attemptNo, phase: cause.phase },
              "reseller call met a kept-alive connection the server had closed; sending it on a new one",
            );
          }
          continue;
        }
        const error = classifyExchangeFailure(call.operation, cause, { timeoutMs, maxAnswerBytes: limit, secrets });
        if (debug) {
          logger.debug(
            { operation: call.operation, method: call.method, url, status: error.status, duration_ms: elapsed(), attempt: attemptNo, error: error.message },
            "reseller call failed",
          );
        }
        throw error;
      }
    }

    const answer = exchanged.sunk ?? readBody(exchanged.status, exchanged.contentType ?? null, exchanged.text, secrets);
    if (debug) logAnswer(logger, call, { url, durationMs: elapsed(), attemptNo }, answer, secrets);
    return answer;
  }

  return {
    send: (call) => sendWithRetries(call, attempt, retry, logger),
    async close() {
      if (!options.pool) await pool.close();
    },
    addSecret(secret) {
      if (secret && !ownSecrets.includes(secret)) ownSecrets.push(secret);
    },
  };
}

/**
 * One call, its attempts and the backoff between them: `attempt` makes one, and shouldRetry
 * decides from its answer or its ResellerError whether another is worth making.
 */
export async function sendWithRetries(
  call: Call,
  attempt: (call: Call, attemptNo: number) => Promise<Answer>,
  retry: Required<RetryOptions>,
  logger: Logger,
): Promise<Answer> {
  for (let retriesSoFar = 0; ; retriesSoFar++) {
    let result: AttemptResult;
    try {
      const answer = await attempt(call, retriesSoFar + 1);
      result = { call, retriesSoFar, maxRetries: retry.maxRetries, answer };
    } catch (error) {
      if (!(error instanceof ResellerError)) throw error;
      result = { call, retriesSoFar, maxRetries: retry.maxRetries, error };
    }
    if (!shouldRetry(result)) {
      if (result.error) throw result.error;
      return result.answer as Answer;
    }
    const delayMs = backoffDelayMs(retriesSoFar, retry);
    logger.debug({ operation: call.operation, attempt: retriesSoFar + 1, delay_ms: delayMs }, "reseller call retry");
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
}

/**
 * A server may close a kept-alive connection while it is idle, just as we pick it. Seen closed
 * before anything was written ("stale"), the request never left: it goes again on a new
 * connection, whatever it does. Broken after the request went out and before any answer, the
 * server most likely closed it unread, but a server that read it and then died looks the
 * same: only a read goes again; a charge is reported as maybe applied, money first. Not
 * counted as a retry: the upstream gave no sign of trouble.
 */
function sendAgainOnNewConnection(failure: ExchangeFailure, call: Call): boolean {
  if (failure.phase === "stale") return true;
  return call.readOnly && failure.phase === "sent" && failure.reusedConnection && !failure.timedOut;
}

/** The debug line of an answered call: the scrubbed URL, status, timing and the body as forLog gives it. */
export function logAnswer(
  logger: Logger,
  call: Call,
  at: { url: string; durationMs: number; attemptNo: number },
  answer: Answer,
  secrets: readonly string[],
): void {
  logger.debug(
    {
      operation: call.operation,
      method: call.method,
      url: at.url,
      status: answer.status,
      duration_ms: at.durationMs,
      attempt: at.attemptNo,
      body: forLog(answer.body, secrets),
    },
    "reseller call",
  );
}

/** A body as a log line may carry it: secrets redacted, long text cut. */
function forLog(body: unknown, secrets: readonly string[]): unknown {
  const redacted = redactSecrets(body, secrets);
  return typeof redacted === "string" && redacted.length > LOGGED_TEXT_LIMIT
    ? `${redacted.slice(0, LOGGED_TEXT_LIMIT)}…`
    : redacted;
}

/** The `code`s of an error, its causes and aggregated errors (a few levels deep). */
export function errorCodes(cause: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = cause;
  for (let depth = 0; depth < 5 && current !== null && typeof current === "object"; depth++) {
    const { code, errors } = current as { code?: unknown; errors?: unknown };
    if (typeof code === "string") codes.push(code);
    // Happy-eyeballs connects fail with an AggregateError of one error per address.
    if (Array.isArray(errors)) codes.push(...errors.flatMap(errorCodes));
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}

/** Phases in which nothing of the request had left this host. */
const NOT_SENT: ReadonlySet<ExchangePhase> = new Set(["building", "waiting", "connecting", "stale"]);

/**
 * The error of a failed exchange, judged by how far it got. Before "sent" the upstream cannot
 * have seen the request, whatever the error code (refused, unknown host, unreachable, a TLS
 * handshake cut off, no connection or no free slot within the timeout); from "sent" on it may
 * have acted on it (dropped, reset, hung up, timed out while it worked).
 */
export function classifyExchangeFailure(
  operation: string,
  cause: unknown,
  limits: { timeoutMs: number; maxAnswerBytes: number; secrets: readonly string[] },
): ResellerError {
  if (!(cause instanceof ExchangeFailure)) {
    return new UnexpectedAnswerError({ operation, message: `${operation}: request failed (${errorText(cause, limits.secrets)})`, cause });
  }
  const { phase, status } = cause;
  const notSent = NOT_SENT.has(phase);
  const withStatus = status === undefined ? {} : { status };
  if (phase === "building") {
    // Refused before sending: a malformed URL or header (an unusable token), or the pool closed.
    return new UnexpectedAnswerError({
      operation,
      message: `${operation}: request could not be made (${errorText(cause.cause, limits.secrets)})`,
      mayHaveTakenEffect: false,
    });
  }
  if (cause.tooLarge) {
    return new UnexpectedAnswerError({
      operation,
      ...withStatus,
      message: `${operation}: answer longer than ${limits.maxAnswerBytes} bytes${status === undefined ? "" : ` (HTTP ${status})`}`,
      mayHaveTakenEffect: true,
    });
  }
  if (cause.timedOut) {
    const where = phase === "waiting" ? ", no free connection" : phase === "connecting" ? ", not connected" : "";
    return new UpstreamUnavailableError({
      operation,
      ...withStatus,
      reason: "timeout",
      message: `${operation}: upstream timed out after ${limits.timeoutMs} ms${where}`,
      mayHaveTakenEffect: !notSent,
      cause,
    });
  }
  return new UpstreamUnavailableError({
    operation,
    ...withStatus,
    reason: "network",
    code: errorCodes(cause.cause)[0],
    mayHaveTakenEffect: !notSent,
    cause,
  });
}

function errorText(cause: unknown, secrets: readonly string[]): string {
  return cause instanceof Error ? scrubText(withoutUrlCredentials(cause.message), secrets) : "request failed";
}
