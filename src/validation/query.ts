import type { z } from "zod";
import { fieldErrors, type FieldErrors } from "./field-errors.js";

/**
 * Query parameters given more than once (`?limit=1&limit=2`), each named: no listing takes a list
 * for a parameter, and guessing which one was meant would answer a page nobody asked for. The
 * query parser hands such a parameter over as an array; undefined when there is none.
 */
export function repeatedParameters(query: Record<string, unknown>): FieldErrors | undefined {
  const errors: FieldErrors = Object.create(null) as FieldErrors;
  for (const [name, value] of Object.entries(query)) {
    if (Array.isArray(value)) errors[name] = [`is given ${value.length} times; give it once`];
  }
  return Object.keys(errors).length ? errors : undefined;
}

/**
 * A query string by `schema`, every problem named at once: a parameter given twice is said to be
 * (not "expected string, received array", nor NaN), and the schema judges the others.
 */
export function parseQuery<T>(schema: z.ZodType<T>, query: Record<string, unknown>): { ok: true; data: T } | { ok: false; errors: FieldErrors } {
  const repeated = repeatedParameters(query);
  const rest = repeated ? Object.fromEntries(Object.entries(query).filter(([name]) => !(name in repeated))) : query;
  const parsed = schema.safeParse(rest);
  if (parsed.success && !repeated) return { ok: true, data: parsed.data };
  const errors: FieldErrors = Object.create(null) as FieldErrors;
  Object.assign(errors, repeated, parsed.success ? {} : fieldErrors(parsed.error, "(query)"));
  return { ok: false, errors };
}
