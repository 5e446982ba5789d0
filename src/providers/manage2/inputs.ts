import { z } from "zod";
import { ipSchema } from "../../vocabulary/products.js";

/**
 * What the Manage2 client sends, checked before anything leaves (strict in what we send).
 *
 * Sources: docs.cpanel.net/manage2/api/ (the function pages: add, expire, reactivate,
 * transfer, package update, licence info, lookup, raw lookup, update metadata); ids with or
 * without their letter (`P001`, `008`) as the docs write them and cPanel's PHP class accepts
 * (`validateID`, `^(L|P|G)?\d*$`). Summarised in notes/providers-research.md, part A.
 */

/** `external_notes` holds at most 64 characters; Manage2 answers an error for a longer value (the Add and UpdateActiveLicenseMetadata pages). */
export const EXTERNAL_NOTES_MAX = 64;

/** A Manage2 id as a positive whole number, from a number or from its digits with or without the letter Manage2 writes before it. */
function idSchema(letter: "L" | "P" | "G") {
  const digits = new RegExp(`^${letter}?0*([1-9]\\d{0,14})$`);
  return z.union(
    [
      z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
      z
        .string()
        .trim()
        .regex(digits, { error: `must be a ${letter === "L" ? "licence" : letter === "P" ? "package" : "group"} id (digits, optionally after ${letter})` })
        .transform((s) => Number(digits.exec(s)![1])),
    ],
    { error: `must be a ${letter === "L" ? "licence" : letter === "P" ? "package" : "group"} id` },
  );
}

export const licenseIdSchema = idSchema("L");
export const packageIdSchema = idSchema("P");
export const groupIdSchema = idSchema("G");

/** Counted in characters as a person counts them, not in UTF-16 units; no control characters. */
export const externalNotesSchema = z
  .string()
  .refine((s) => [...s].length <= EXTERNAL_NOTES_MAX, { error: `must be at most ${EXTERNAL_NOTES_MAX} characters (Manage2 refuses longer notes)` })
  .refine((s) => !/\p{Cc}/u.test(s), { error: "must not contain control characters" });

/** The expiry codes of XMLlicenseExpire (docs.cpanel.net/manage2/api/manage2-api-expire-licenses/); `normal` is Manage2's default. */
export const EXPIRE_CODES = ["normal", "nocomplete", "noverify", "shutoff", "chargeback", "fraud", "other"] as const;
export type ExpireCode = (typeof EXPIRE_CODES)[number];

const reasonSchema = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .refine((s) => !/\p{Cc}/u.test(s), { error: "must not contain control characters" });

export const licenseAddInput = z.strictObject({
  ip: ipSchema,
  packageid: packageIdSchema,
  /** Without it, the account's default group. */
  groupid: groupIdSchema.optional(),
  /** Manage2 defaults it to 1, so it is always sent. (Default: false) */
  force: z.boolean().default(false),
  /** Whether an expired licence of this package on this IP may be reactivated, and billed. Manage2 defaults it to 1, so it is always sent. (Default: false) */
  reactivateok: z.boolean().default(false),
  external_notes: externalNotesSchema.optional(),
});

export const licenseExpireInput = z.strictObject({
  liscid: licenseIdSchema,
  reason: reasonSchema.optional(),
  /** (Default: "normal", sent) */
  expcode: z.enum(EXPIRE_CODES).default("normal"),
});

export const licenseReActivateInput = z.strictObject({
  liscid: licenseIdSchema,
  force: z.boolean().default(false),
  /** The page says Manage2 defaults it to 1 (nothing reactivated): always sent. (Default: false) */
  dryrun: z.boolean().default(false),
});

export const transferInput = z.strictObject({
  oldip: ipSchema,
  newip: ipSchema,
  /** Required here: without it Manage2 moves every licence on the old IP. */
  packageid: packageIdSchema,
  /** Whether to go on when the move adds a charge to a deactivated IP. (Default: false) */
  force: z.boolean().default(false),
  dryrun: z.boolean().default(false),
});

export const packageUpdateInput = z.strictObject({
  ip: ipSchema,
  newpackageid: packageIdSchema,
  /** Required here: Manage2 guesses it when absent, and must be told when several licences share the IP. */
  oldpackageid: packageIdSchema,
});

export const licenseInfoInput = z.strictObject({
  /** Expired (and suspended) licences instead of active ones. (Default: false) */
  expired: z.boolean().default(false),
  groupid: groupIdSchema.optional(),
  packageid: packageIdSchema.optional(),
  liscid: licenseIdSchema.optional(),
});

export const lookupInput = z.strictObject({
  ip: ipSchema,
  packageid: packageIdSchema.optional(),
  /** Every licence on the IP, not the first. (Default: true, as cPanel's own classes do) */
  all: z.boolean().default(true),
});

export const updateMetadataInput = z.strictObject({
  liscid: licenseIdSchema,
  /** Overwrites the notes; "" clears them. */
  external_notes: externalNotesSchema,
});

/** How a boolean travels: Manage2's examples write 0 and 1. */
export const flag = (value: boolean): "0" | "1" => (value ? "1" : "0");
