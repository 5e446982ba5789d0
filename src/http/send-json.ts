import type { Response } from "express";

/**
 * The answer `res.status(status).json(body)` gives, with the same headers (Content-Type
 * `application/json; charset=utf-8`, Content-Length), written straight to the response. Express's
 * json and send look up five settings, the MIME type and the charset, and the request's
 * freshness on every call; the webhook route answers every delivery, so that is per request.
 * Only for apps with ETags off (createApp turns them off) and for answers to requests that are
 * not HEAD: both would change what Express sends.
 */
export function sendJson(res: Response, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", Buffer.byteLength(text));
  res.end(text);
}
