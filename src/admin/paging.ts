import type { Request, Response } from "express";
import { z } from "zod";
import { sendError } from "../http/errors.js";
import type { FieldErrors } from "../validation/field-errors.js";
import { parseQuery } from "../validation/query.js";
import { decodeCursor, PAGE_LIMIT, type Listing, type Page } from "../store/store.js";

/** What a `limit` must be, wherever one is typed (admin API, CLI). */
export const LIMIT_RULE = `must be a whole number from 1 to ${PAGE_LIMIT.max}`;
/** What a `cursor` must be. */
export const CURSOR_RULE = "must be a next_cursor this listing answered";

/**
 * `limit`: plain decimal digits, 1 to PAGE_LIMIT.max; absent (or sent empty, as any filter
 * here) means PAGE_LIMIT.default. Above the maximum is refused rather than cut, so a script
 * asking for 5000 learns that it gets pages, instead of silently getting 1000.
 */
export const limitSchema = z
  .string({ error: LIMIT_RULE })
  .optional()
  .refine((v) => v === undefined || v === "" || (/^[1-9][0-9]{0,6}$/.test(v) && Number(v) <= PAGE_LIMIT.max), { error: LIMIT_RULE })
  .transform((v) => (v === undefined || v === "" ? PAGE_LIMIT.default : Number(v)))
  .describe(`items per page, 1-${PAGE_LIMIT.max} (Default: ${PAGE_LIMIT.default})`);

/** `cursor`: a `next_cursor` of the same listing, or nothing for the first page. */
export const cursorSchema = (listing: Listing) =>
  z
    .string({ error: CURSOR_RULE })
    .optional()
    .refine((v) => v === undefined || v === "" || decodeCursor(listing, v) !== undefined, { error: CURSOR_RULE })
    .transform((v) => (v === "" ? undefined : v))
    .describe("the next_cursor of the page before; absent for the first page");

/** The paging fields of a listing's query string. */
export const pagingFields = (listing: Listing) => ({ limit: limitSchema, cursor: cursorSchema(listing) });

/** A page as the admin API answers it: the items under the listing's own key, then where the next page begins and how many there are in all. */
export function pageBody<T, V>(key: string, page: Page<T>, view: (item: T) => V) {
  return { [key]: page.items.map(view), next_cursor: page.nextCursor, total: page.total };
}

/**
 * `cursor` of a listing paged by an entry's id, newest first (the audit trail): the id as plain
 * decimal digits, since `Number()` would read `1e3` or `0x10`.
 */
export const idCursorSchema = z
  .string()
  .optional()
  .refine((v) => v === undefined || v === "" || /^[1-9][0-9]{0,15}$/.test(v), { error: CURSOR_RULE })
  .transform((v) => (v === undefined || v === "" ? undefined : Number(v)))
  .describe("the next_cursor of the page before; absent for the first page");

/** The 422 of a bad query: `errors` names every wrong field, `field` the first (what a script checks). */
export function sendQueryError(res: Response, errors: FieldErrors): void {
  sendError(res, 422, "validation", "Validation error", { field: Object.keys(errors)[0] ?? null, errors });
}

/** The request's query by `schema`; undefined, with its 422 sent, when anything in it is wrong. */
export function queryOf<T>(req: Request, res: Response, schema: z.ZodType<T>): T | undefined {
  const q = parseQuery(schema, req.query as Record<string, unknown>);
  if (q.ok) return q.data;
  sendQueryError(res, q.errors);
  return undefined;
}
