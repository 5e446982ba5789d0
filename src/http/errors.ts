import type { ErrorRequestHandler, Response } from "express";
import type { Logger } from "../log/logger.js";
import type { ErrorCode } from "../vocabulary/error-codes.js";
import { NOT_AN_OBJECT } from "../validation/field-errors.js";
import { loggablePath, type TokenDigests } from "./loggable-path.js";

/**
 * An error answer in a router's own form, for a surface that people read rather than programs:
 * the console's HTML page. A router sets one as `res.locals.errorAnswer` for its requests, and
 * every error answer to them takes that form with its status kept, wherever it arises (the
 * router's own, a body parser's 413, the store's 503, the app's 404).
 */
export type ErrorAnswer = (res: Response, status: number, code: ErrorCode, error: string) => void;

/**
 * Every error answer has this shape: `{"error": "...", "code": "..."}` plus details, with the real
 * status. `code` is one of ERROR_CODES (stable; modules match on it). The provisioning API's
 * answers also carry `"success": false` (its router marks the response so); the console's are
 * pages (ErrorAnswer).
 */
export function sendError(res: Response, status: number, code: ErrorCode, error: string, extra: Record<string, unknown> = {}): void {
  const answer = res.locals.errorAnswer as ErrorAnswer | undefined;
  if (answer) return answer(res, status, code, error);
  res.status(status).json({ ...(res.locals.successFlag ? { success: false } : {}), error, code, ...extra });
}

/** A body parser's limit in the words its 413 uses: "64 KiB", "8 MiB". */
function sizeInWords(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * The service cannot take the request now but will later (the database is busy or gone): 503
 * with `Retry-After`, so a panel retries instead of dropping the event.
 */
export class ServiceUnavailableError extends Error {
  readonly status = 503;
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "ServiceUnavailableError";
  }
}

/** Seconds a client should wait before trying again while another process holds the write lock. */
export const BUSY_RETRY_AFTER_SECONDS = 5;

/**
 * Maps body-parser failures to their statuses; an unavailable service and a store error that
 * `isBusy` says is worth trying again soon (SQLite: a database locked by another process, a
 * backup or an operator's sqlite3 shell) to 503 with Retry-After; anything unexpected to a 500
 * without internals. No answer echoes the path, and the paths it logs are masked (`secrets`, `digests`).
 */
export function errorHandler(
  logger: Logger,
  isBusy: (err: unknown) => boolean = () => false,
  secrets: readonly string[] = [],
  digests?: TokenDigests,
): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const unavailable =
      err instanceof ServiceUnavailableError
        ? err
        : isBusy(err)
          ? new ServiceUnavailableError("the database is busy; try again in a few seconds", BUSY_RETRY_AFTER_SECONDS)
          : undefined;
    if (unavailable) {
      // What lies behind the answer's words (the store's lost file, PostgreSQL's error) is for the log only.
      const cause = unavailable.cause instanceof Error ? unavailable.cause.message : unavailable.cause;
      logger.warn({ path: loggablePath(req.originalUrl, secrets, digests), reason: unavailable.message, ...(cause === undefined ? {} : { cause }) }, "refused: service unavailable");
      res.setHeader("Retry-After", String(unavailable.retryAfterSeconds));
      return sendError(res, 503, "unavailable", unavailable.message);
    }
    const e = err as { type?: string; status?: number; statusCode?: number; message?: string; limit?: number };
    // The limit of the parser that refused: each route has its own (64 KiB for a webhook, 64 MiB for an adoption).
    if (e.type === "entity.too.large") {
      return sendError(res, 413, "payload_too_large", typeof e.limit === "number" ? `Request body too large (${sizeInWords(e.limit)} at most)` : "Request body too large");
    }
    if (e.type === "parameters.too.many") return sendError(res, 413, "payload_too_large", "Too many parameters");
    if (e.type === "entity.parse.failed") {
      // The parser takes objects and lists only: `null`, `1` or `"x"` is JSON, just not what a route takes.
      if (isJson((err as { body?: unknown }).body)) return sendError(res, 422, "validation", "Validation error", { errors: { "(body)": [NOT_AN_OBJECT] } });
      return sendError(res, 400, "bad_json", "Request body is not valid JSON");
    }
    if (e.type === "encoding.unsupported" || e.type === "charset.unsupported") return sendError(res, 415, "unsupported_media_type", e.message ?? "Unsupported encoding");
    // The router's "Failed to decode param '<value>'" would echo the value: Blesta's token, there.
    if (err instanceof URIError) return sendError(res, 400, "bad_request", "The path holds a malformed percent-encoding");
    const status = e.status ?? e.statusCode;
    if (status && status >= 400 && status < 500) return sendError(res, status, "bad_request", e.message ?? "Bad request");
    logger.error({ err, path: loggablePath(req.originalUrl, secrets, digests) }, "unhandled error");
    sendError(res, 500, "internal", "Internal error");
  };
}

function isJson(text: unknown): boolean {
  if (typeof text !== "string") return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
