import type { z } from "zod";

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
    add(issue.path, missing ? "is required" : issue.message);
  }
  return out;
}
