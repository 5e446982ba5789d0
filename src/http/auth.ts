import { createHash, timingSafeEqual } from "node:crypto";
import type { RequestHandler } from "express";
import { sendError } from "./errors.js";

/**
 * Bearer-token guard; hashes both sides so the comparison is constant-time whatever the lengths.
 * The 401 is sendError's, which each API shapes itself (the provisioning API's `success: false`).
 */
export function requireBearer(token: string, realm = "admin"): RequestHandler {
  const expected = createHash("sha256").update(token).digest();
  return (req, res, next) => {
    const header = req.headers.authorization ?? "";
    const match = /^Bearer\s+(.+)$/i.exec(header);
    const given = createHash("sha256").update(match?.[1]?.trim() ?? "").digest();
    if (!match || !timingSafeEqual(given, expected)) {
      res.setHeader("WWW-Authenticate", `Bearer realm="license-bridge ${realm}"`);
      return sendError(res, 401, "unauthorized", `Unauthorized: send Authorization: Bearer <${realm === "admin" ? "ADMIN_TOKEN" : "PROVISIONING_TOKEN"}>`);
    }
    next();
  };
}
