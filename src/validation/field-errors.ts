import type { z } from "zod";

/** What a body that is JSON, but not an object, is told. */
export const NOT_AN_OBJECT = "must be a JSON object";

/** Field path → messages, the body of a 422. */
export type FieldErrors = Record<string, string[]>;

/**
 * Turns zod issues into `{"service.ip": ["must be ..."]}`: the exact field that is wrong, one
 * entry per field. `root` names issues about the whole value.
 */
export function fieldErrors(error: z.ZodError, root = "(body)"): FieldErrors {
  // No prototype: a field may be called "constructor" or "toString".
  const out: FieldErrors = Object.create(null) as FieldErrors;
  const add = (path: PropertyKey[], message: string) => (out[path.length ? path.map(String).join(".") : root] ??= []).push(message);
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) add([...issue.path, key], "is not a known field");
      continue;
    }
    // zod does not keep the input on issues; its own wording says when the value was absent.
    const missing = issue.code === "invalid_type" && /received undefined$/.test(issue.message);
    // A body that is JSON, but a list or a plain value where an object was wanted.
    const notObject = issue.code === "invalid_type" && issue.path.length === 0 && issue.expected === "object" && !missing;
    add(issue.path, missing ? "is required" : notObject ? NOT_AN_OBJECT : issue.message);
  }
  return out;
}
