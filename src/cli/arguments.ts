import { z } from "zod";
import { CliError, EXIT } from "./output.js";

/**
 * Numbers and ids an operator types for the reseller's money commands. `Number()` would read
 * `0x10` as 16 and `1e3` as 1000 and ignore surrounding blanks, so a typo could move money
 * nobody meant to move: only plain decimals are taken.
 */
const DECIMAL = /^(0|[1-9][0-9]{0,11})(\.[0-9]{1,8})?$/;

export const AMOUNT_RULE = "must be a positive decimal number such as 10 or 10.5";
export const NON_NEGATIVE_RULE = "must be zero or a positive decimal number such as 0, 10 or 10.5";
export const ACCOUNT_ID_RULE = "must be an account id in plain decimal digits (e.g. 7)";

export const amountSchema = z.string().regex(DECIMAL).transform(Number).refine((n) => n > 0);
export const nonNegativeSchema = z.string().regex(DECIMAL).transform(Number);
/** The upstream's account ids are whole numbers; kept as text, as the client sends them. */
export const accountIdSchema = z.string().regex(/^[1-9][0-9]{0,17}$/);

/** `raw` parsed by `schema`, or a usage error (exit 2) in one line naming the argument. */
export function parseArgument<T>(schema: z.ZodType<T, string>, name: string, rule: string, raw: string): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new CliError(`${name} ${rule}, got "${raw}"`, EXIT.usage);
  return parsed.data;
}

export const amountArg = (raw: string) => parseArgument(amountSchema, "amount", AMOUNT_RULE, raw);
export const accountIdArg = (raw: string) => parseArgument(accountIdSchema, "id", ACCOUNT_ID_RULE, raw);
export const nonNegativeOption = (name: string, raw: string) => parseArgument(nonNegativeSchema, name, NON_NEGATIVE_RULE, raw);

/**
 * `raw` by one of the admin API's own schemas, or a usage error (exit 2) in one line naming the
 * option or argument with the schema's words: the CLI takes what the API takes. Absent stays absent.
 */
export function checkedAsApi<T>(schema: z.ZodType<T>, name: string, raw: string | undefined): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new CliError(`${name} ${parsed.error.issues[0]!.message}`, EXIT.usage);
  return parsed.data;
}
