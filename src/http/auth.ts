import { createHash, timingSafeEqual } from "node:crypto";
import type { RequestHandler, Response } from "express";
import { sendError } from "./errors.js";

/**
 * Bearer-token guard; hashes both sides so the comparison is constant-time whatever the lengths.
 * `refuse` writes the 401 in the API's own shape (default: the admin API's).
 */
export function requireBearer(
  token: string,
  realm = "admin",
  refuse: (res: Response, message: string) => void = (res, message) => sendError(res, 401, "unauthorized", message),
): RequestHandler {
  const expected = createHash("sha256").update(token).digest();
  return (req, res, next) => {
    const header = req.headers.authorization ?? "";
    const match = /^Bearer\s+(.+)$/i.exec(header);
    const given = createHash("sha256").update(match?.[1]?.trim() ?? "").digest();
    if (!match || !timingSafeEqual(given, expected)) {
      res.setHeader("WWW-Authenticate", `Bearer realm="license-bridge ${realm}"`);
      return refuse(res, `Unauthorized: send Authorization: Bearer <${realm === "admin" ? "ADMIN_TOKEN" : "PROVISIONING_TOKEN"}>`);
    }
    next();
  };
}
