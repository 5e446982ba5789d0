import { z } from "zod";
import { serviceIdText } from "../intake/event-schema.js";
import type { FieldErrors } from "../validation/field-errors.js";

/** What a job id looks like wherever one is typed (admin API, CLI). */
export const JOB_ID_RULE = "must be a job id in plain decimal digits (e.g. 42)";
/**
 * Plain decimal digits only: `Number()` (or `z.coerce`) would read `0x1` as job 1 and `1e3` as
 * job 1000, so an id written any other way would act on a job nobody named.
 */
export const jobIdSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,15}$/, { error: JOB_ID_RULE })
  .transform(Number)
  .refine(Number.isSafeInteger, { error: JOB_ID_RULE });

/** A service id as a path or a form names one: the intake's rule (src/intake/event-schema.ts). */
export const serviceIdSchema = serviceIdText;

/** What is wrong with a service id an operator named, as the `errors` of a 422 naming `id`; undefined when nothing is. */
export function serviceIdProblem(id: string): FieldErrors | undefined {
  const parsed = serviceIdSchema.safeParse(id);
  return parsed.success ? undefined : { id: parsed.error.issues.map((i) => i.message) };
}
