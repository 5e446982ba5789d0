import type { Response } from "express";
import { z } from "zod";
import { sendError } from "../http/errors.js";
import { fieldErrors } from "../validation/field-errors.js";

/**
 * Paging of an admin listing (contract section 4): `limit` (default 100, at most 1000) and
 * `cursor` in, `next_cursor` (null on the last page) and `total` out. Both as plain decimal
 * digits: `Number()` would read `1e3` or `0x10`, and a cursor is an entry's id, opaque to callers.
 */
export const LIMIT_RULE = "must be a whole number from 1 to 1000 (default 100)";
export const CURSOR_RULE = "must be the next_cursor of the page before";
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

export const limitSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,3}$/, { error: LIMIT_RULE })
  .transform(Number)
  .refine((n) => n <= MAX_LIMIT, { error: LIMIT_RULE })
  .optional()
  .describe(LIMIT_RULE);
export const cursorSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,15}$/, { error: CURSOR_RULE })
  .transform(Number)
  .optional()
  .describe("next_cursor of the page before; absent for the first page");

/** The 422 of a bad query: `errors` names every wrong field, `field` the first (what a script checks). */
export function sendQueryError(res: Response, error: z.ZodError): void {
  const errors = fieldErrors(error, "(query)");
  sendError(res, 422, "validation", "Validation error", { field: Object.keys(errors)[0] ?? null, errors });
}
