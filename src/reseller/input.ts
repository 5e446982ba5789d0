import type { z } from "zod";
import { ValidationError } from "./errors.js";
import { fieldErrors } from "../validation/field-errors.js";

/**
 * Checks our own input before anything is sent: strict in what we send. A failure is a
 * ValidationError without `status` and with `mayHaveTakenEffect: false`, naming each field.
 */
export function checkInput<T extends z.ZodType>(operation: string, schema: T, input: unknown): z.output<T> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const errors = fieldErrors(parsed.error, "_");
  throw new ValidationError({
    operation,
    errors,
    mayHaveTakenEffect: false,
    message: `${operation}: invalid ${Object.keys(errors).join(", ")} (not sent)`,
  });
}
