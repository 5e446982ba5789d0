import type { RequestHandler } from "express";

/**
 * The console's Content-Security-Policy: nothing inline (no script, no style attribute), one
 * stylesheet of our own, forms posting only here, never framed. The console ships no script.
 */
export const CONSOLE_CSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Headers on every console answer: its pages hold licence data, so none is cached or framed. */
export const securityHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader("Content-Security-Policy", CONSOLE_CSP);
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("Referrer-Policy", "same-origin");
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Cache-Control", "no-store");
  next();
};
