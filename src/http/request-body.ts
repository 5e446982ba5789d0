import type { Request } from "express";

/** The request announces a body (a length above zero, or chunks): its Content-Type must say what it is. */
export function hasBody(req: Request): boolean {
  return Number(req.headers["content-length"] ?? 0) > 0 || req.headers["transfer-encoding"] !== undefined;
}
