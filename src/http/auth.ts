import { createHash, timingSafeEqual } from "node:crypto";
import type { RequestHandler } from "express";
import { sendError } from "./errors.js";

/**
 * Bearer-token guard accepting any of `tokens` (several while one is rotated); hashes both sides
 * so each comparison is constant-time whatever the lengths, and compares with every token, so the
 * time does not tell which one matched. The 401 is sendError's, which each API shapes itself (the
 * provisioning API's `success: false`).
 */
export function requireBearer(tokens: string | readonly string[], realm = "admin"): RequestHandler {
  const expected = (typeof tokens === "string" ? [tokens] : tokens).map((t) => createHash("sha256").update(t).digest());
  return (req, res, next) => {
    const header = req.headers.authorization ?? "";
    const match = /^Bearer\s+(.+)$/i.exec(header);
    const given = createHash("sha256").update(match?.[1]?.trim() ?? "").digest();
    let ok = false;
    for (const e of expected) ok = timingSafeEqual(given, e) || ok;
    if (!match || !ok) {
      res.setHeader("WWW-Authenticate", `Bearer realm="license-bridge ${realm}"`);
      return sendError(res, 401, "unauthorized", `Unauthorized: send Authorization: Bearer <${realm === "admin" ? "ADMIN_TOKEN" : "PROVISIONING_TOKEN"}>`);
    }
    next();
  };
}
