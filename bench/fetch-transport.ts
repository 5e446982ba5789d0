// The reseller transport as it was before issue #14: global fetch (undici) with an AbortSignal
// timeout. Kept here, unchanged in what it does on the wire, so bench/reseller-client.ts can
// measure it beside src/reseller/transport.ts in the same process. Not used by the product.
import { silentLogger, type Logger } from "../src/log/logger.js";
import { ResellerError, UnexpectedAnswerError, UpstreamUnavailableError } from "../src/reseller/errors.js";
import { redactSecrets, scrubSecrets, scrubText, scrubUrl } from "../src/reseller/redact.js";
import {
  backoffDelayMs,
  DEFAULT_RETRY,
  DEFAULT_TIMEOUT_MS,
  shouldRetry,
  type Answer,
  type AttemptResult,
  type Call,
  type RetryOptions,
  type Transport,
} from "../src/reseller/transport.js";

export interface FetchTransportOptions {
  token: string;
  timeoutMs?: number;
  logger?: Logger;
  retry?: Partial<RetryOptions>;
}

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

const LOGGED_TEXT_LIMIT = 2_000;

export function createFetchTransport(options: FetchTransportOptions): Transport {
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
        await new Promise((resolve) => setTimeout(resolve, backoffDelayMs(retriesSoFar, retry)));
      }
    },
    // undici's global dispatcher owns the connections; nothing of ours to close.
    async close() {},
  };
}

function readBody(status: number, contentType: string | null, text: string, secrets: readonly string[]): Answer {
  const trimmed = text.trim();
  const looksJson = /json/i.test(contentType ?? "") || trimmed.startsWith("{") || trimmed.startsWith("[");
  if (looksJson && trimmed !== "") {
    try {
      return { status, body: scrubSecrets(JSON.parse(trimmed), secrets), isJson: true };
    } catch {
      // kept as text
    }
  }
  return { status, body: scrubText(text, secrets), isJson: false };
}

function forLog(body: unknown, secrets: readonly string[]): unknown {
  const redacted = redactSecrets(body, secrets);
  return typeof redacted === "string" && redacted.length > LOGGED_TEXT_LIMIT ? `${redacted.slice(0, LOGGED_TEXT_LIMIT)}…` : redacted;
}

function errorCodes(cause: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = cause;
  for (let depth = 0; depth < 5 && current !== null && typeof current === "object"; depth++) {
    const { code, errors } = current as { code?: unknown; errors?: unknown };
    if (typeof code === "string") codes.push(code);
    if (Array.isArray(errors)) codes.push(...errors.flatMap(errorCodes));
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}

function classifyFetchFailure(operation: string, cause: unknown, timeoutMs: number, secrets: readonly string[]): ResellerError {
  const name = cause instanceof Error ? cause.name : "";
  if (name === "TimeoutError" || name === "AbortError") {
    return new UpstreamUnavailableError({ operation, reason: "timeout", message: `${operation}: upstream timed out after ${timeoutMs} ms`, cause });
  }
  const codes = errorCodes(cause);
  if (cause instanceof TypeError && cause.message === "fetch failed") {
    const notSent = codes.length > 0 && codes.every((code) => NOT_SENT_CODES.has(code));
    return new UpstreamUnavailableError({ operation, reason: "network", code: codes[0], mayHaveTakenEffect: !notSent, cause });
  }
  const detail = cause instanceof Error ? scrubText(cause.message, secrets) : "request failed";
  return new UnexpectedAnswerError({ operation, message: `${operation}: request could not be made (${detail})`, mayHaveTakenEffect: false });
}
