import type { ErrorRequestHandler, Response } from "express";
import type { Logger } from "../log/logger.js";
import { loggablePath } from "./loggable-path.js";

/** Every error answer has this shape: `{"error": "..."}` plus details, with the real status. */
export function sendError(res: Response, status: number, error: string, extra: Record<string, unknown> = {}): void {
  res.status(status).json({ error, ...extra });
}

/** Maps body-parser failures to their statuses, and anything unexpected to a 500 without internals. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    const e = err as { type?: string; status?: number; statusCode?: number; message?: string };
    if (e.type === "entity.too.large") return sendError(res, 413, "Request body too large (64 KiB at most)");
    if (e.type === "entity.parse.failed") return sendError(res, 400, "Request body is not valid JSON");
    if (e.type === "encoding.unsupported" || e.type === "charset.unsupported") return sendError(res, 415, e.message ?? "Unsupported encoding");
    const status = e.status ?? e.statusCode;
    if (status && status >= 400 && status < 500) return sendError(res, status, e.message ?? "Bad request");
    logger.error({ err, path: loggablePath(req.originalUrl) }, "unhandled error");
    sendError(res, 500, "Internal error");
  };
}
