import { silentLogger, type Logger } from "../log/logger.js";
import { ResellerError, UnexpectedAnswerError, UpstreamUnavailableError, type ResellerErrorKind } from "./errors.js";
import { redactSecrets, scrubSecrets, scrubText, scrubUrl } from "./redact.js";

/** The one place that talks HTTP to the reseller: timeouts, logging, scrubbing and retries. */

export interface RetryOptions {
  /** Further tries after the first. (Default: 2) */
  maxRetries: number;
  /** First backoff; doubles per try, capped at `maxDelayMs`, with jitter. (Default: 250) */
  baseDelayMs: number;
  /** (Default: 2000) */
  maxDelayMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_RETRY: Readonly<Required<RetryOptions>> = { maxRetries: 2, baseDelayMs: 250, maxDelayMs: 2_000 };

export interface TransportOptions {
  /** Scrubbed from every URL, body and log line. */
  token: string;
  /** Per attempt. (Default: 10000) */
  timeoutMs?: number;
  /** Each attempt is logged at debug level. (Default: silent) */
  logger?: Logger;
  retry?: Partial<RetryOptions>;
}

export interface Call {
  /** Names the call in logs and errors, e.g. "v1.register". */
  operation: string;
  method: "GET" | "POST";
  url: URL;
  headers?: Record<string, string>;
  /** Serialised as the JSON request body. */
  json?: unknown;
  /** True when the call changes nothing upstream, so repeating it after it was sent is safe. */
  readOnly: boolean;
}

export interface Answer {
  status: number;
  /** Parsed JSON when the body is JSON, else the text; our token scrubbed out. */
  body: unknown;
  isJson: boolean;
}

export interface Transport {
  /** Resolves with any HTTP answer (the caller classifies statuses); rejects with a ResellerError. */
  send(call: Call): Promise<Answer>;
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

/** Failures that certainly happened before a byte of the request left this host. */
const NOT_SENT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_NONAME",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
]);

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
  // Nothing reached the upstream (refused, unknown host), so even a charge cannot happen twice.
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
  const secrets = [options.token];
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const logger = options.logger ?? silentLogger();
  const retry: Required<RetryOptions> = { ...DEFAULT_RETRY, ...options.retry };

  async function attempt(call: Call, attemptNo: number): Promise<Answer> {
    const url = scrubUrl(call.url.toString(), secrets);
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    const headers: Record<string, string> = { "User-Agent": "license-bridge", ...call.headers };
    let response: Response;
    try {
      response = await fetch(call.url, {
        method: call.method,
        headers,
        body: call.json === undefined ? undefined : JSON.stringify(call.json),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (cause) {
      const error = classifyFetchFailure(call.operation, cause, timeoutMs, secrets);
      logger.debug(
        { operation: call.operation, method: call.method, url, duration_ms: elapsed(), attempt: attemptNo, error: error.message },
        "reseller call failed",
      );
      throw error;
    }

    let text: string;
    try {
      text = await response.text();
    } catch (cause) {
      // The status line arrived, so the request was certainly received.
      const failure = classifyFetchFailure(call.operation, cause, timeoutMs, secrets);
      const error = new UpstreamUnavailableError({
        operation: call.operation,
        status: response.status,
        reason: failure instanceof UpstreamUnavailableError ? failure.reason : "network",
        code: failure instanceof UpstreamUnavailableError ? failure.code : undefined,
        mayHaveTakenEffect: true,
        cause,
      });
      logger.debug(
        { operation: call.operation, method: call.method, url, status: response.status, duration_ms: elapsed(), attempt: attemptNo, error: error.message },
        "reseller call failed",
      );
      throw error;
    }

    const answer = readBody(response.status, response.headers.get("content-type"), text, secrets);
    logger.debug(
      {
        operation: call.operation,
        method: call.method,
        url,
        status: answer.status,
        duration_ms: elapsed(),
        attempt: attemptNo,
        body: forLog(answer.body, secrets),
      },
      "reseller call",
    );
    return answer;
  }

  return {
    async send(call) {
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
    },
  };
}

function readBody(status: number, contentType: string | null, text: string, secrets: readonly string[]): Answer {
  const trimmed = text.trim();
  const looksJson = /json/i.test(contentType ?? "") || trimmed.startsWith("{") || trimmed.startsWith("[");
  if (looksJson && trimmed !== "") {
    try {
      return { status, body: scrubSecrets(JSON.parse(trimmed), secrets), isJson: true };
    } catch {
      // A body labelled JSON that is not JSON is kept as text for the error message.
    }
  }
  return { status, body: scrubText(text, secrets), isJson: false };
}

function forLog(body: unknown, secrets: readonly string[]): unknown {
  const redacted = redactSecrets(body, secrets);
  return typeof redacted === "string" && redacted.length > LOGGED_TEXT_LIMIT
    ? `${redacted.slice(0, LOGGED_TEXT_LIMIT)}…`
    : redacted;
}

function errorCodes(cause: unknown): string[] {
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

function classifyFetchFailure(operation: string, cause: unknown, timeoutMs: number, secrets: readonly string[]): ResellerError {
  const name = cause instanceof Error ? cause.name : "";
  if (name === "TimeoutError" || name === "AbortError") {
    // The request may have been received and be running; we just stopped waiting.
    return new UpstreamUnavailableError({
      operation,
      reason: "timeout",
      message: `${operation}: upstream timed out after ${timeoutMs} ms`,
      cause,
    });
  }
  const codes = errorCodes(cause);
  if (cause instanceof TypeError && cause.message === "fetch failed") {
    const notSent = codes.length > 0 && codes.every((code) => NOT_SENT_CODES.has(code));
    return new UpstreamUnavailableError({
      operation,
      reason: "network",
      code: codes[0],
      mayHaveTakenEffect: !notSent,
      cause,
    });
  }
  // Not a network failure (a malformed URL or header): fetch refused before sending.
  const detail = cause instanceof Error ? scrubText(cause.message, secrets) : "request failed";
  return new UnexpectedAnswerError({
    operation,
    message: `${operation}: request could not be made (${detail})`,
    mayHaveTakenEffect: false,
  });
}
