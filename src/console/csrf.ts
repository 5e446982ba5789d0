import type { RequestHandler } from "express";
import { sendError } from "../http/errors.js";
import { sameSecret, sessionOf } from "./session.js";

/** The hidden field every console form carries. */
export const CSRF_FIELD = "csrf";

/**
 * Every POST of a session must carry the session's CSRF value: 403 without it or with another.
 * (SameSite=Strict already keeps the cookie off other sites' requests; this holds when a browser
 * does not honour it.)
 */
export const requireCsrf: RequestHandler = (req, res, next) => {
  const given = (req.body as Record<string, unknown> | undefined)?.[CSRF_FIELD];
  if (typeof given !== "string" || !sameSecret(given, sessionOf(res).csrf)) {
    return sendError(res, 403, "forbidden", "This form has expired or did not come from the console (CSRF check failed): reload the page and try again.");
  }
  next();
};
