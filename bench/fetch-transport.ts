// The reseller transport as it was before issue #14: global fetch (undici) with an AbortSignal
// timeout. Kept here, unchanged in what it does on the wire (the answer's reading, the log
// lines and the retry loop are the product's own), so bench/reseller-client.ts can
// measure it beside src/reseller/transport.ts in the same process. Not used by the product.
import { silentLogger, type Logger } from "../src/log/logger.js";
import { UnexpectedAnswerError, UpstreamUnavailableError, type ResellerError } from "../src/reseller/errors.js";
import { scrubText, scrubUrl } from "../src/reseller/redact.js";
import {
  DEFAULT_RETRY,
  DEFAULT_TIMEOUT_MS,
  errorCodes,
  logAnswer,
  sendWithRetries,
  type Answer,
  type Call,
  type RetryOptions,
  type Transport,
} from "../src/reseller/transport.js";
import { readBody } from "../src/reseller/answer-body.js";

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
    logAnswer(logger, call, { url, durationMs: elapsed(), attemptNo }, answer, secrets);
    return answer;
  }

  return {
    send: (call) => sendWithRetries(call, attempt, retry, logger),
    // undici's global dispatcher owns the connections; nothing of ours to close.
    async close() {},
    addSecret(secret) {
      if (secret && !secrets.includes(secret)) secrets.push(secret);
    },
  };
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
