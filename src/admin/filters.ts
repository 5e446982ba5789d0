import { z } from "zod";
import { atMost } from "../validation/length.js";
import { PROVIDER_NAMES } from "../vocabulary/provider-names.js";

/**
 * The filters of the listings, one rule each wherever one is typed: the admin API's query, the
 * console's forms and the CLI's options. Kept apart from the routes so the CLI checks its options
 * without loading them.
 */

/**
 * A filter sent empty is no filter: the contract itself writes them so (`?status=`,
 * `?state=&service_id=`), and a form or script that leaves one blank sends the key anyway. The
 * "" is part of each filter's schema, not stripped before parsing, so an unknown key stays
 * refused whatever its value and the OpenAPI document shows that "" is accepted.
 */
export const noFilterIfEmpty = <T extends string>(schema: z.ZodType<T>) => schema.optional().transform((v) => (v === "" ? undefined : (v as Exclude<T, "">)));

/** The longest search term a licence search takes. */
export const SEARCH_MAX = 256;

/** One look-up key of a licence (service id, IP, e-mail, licence key): exact match, each by its index. */
export const searchSchema = z
  .string()
  .max(SEARCH_MAX, atMost(SEARCH_MAX))
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v.trim()))
  .describe("a service id, an IP address (any spelling), a customer e-mail (any case) or a licence key: exact match");

/** A service id or a job kind to filter by: at most 64 characters, as ids and kinds are. */
export const idFilterSchema = noFilterIfEmpty(z.string().max(64, atMost(64)));

/** One provider's licences only (issue 36): the reseller, cPanel's Manage2 or CloudLinux's CLN. */
export const providerFilterSchema = noFilterIfEmpty(z.enum(["", ...PROVIDER_NAMES])).describe("only the licences of this provider");
