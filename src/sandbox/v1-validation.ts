import { z } from "zod";
import {
  BILLING_CYCLE_MONTHS,
  type BillingCycleMonths,
  billingCycleMonthsSchema,
  ipSchema,
  type LitespeedVariant,
  litespeedVariantSchema,
  positiveAmountSchema,
  type ProductType,
  productTypeSchema,
} from "../vocabulary/products.js";
import { type BundleId, isBundleId } from "./prices.js";
import { isPlainObject } from "./request-log.js";

/**
 * v1 validation in the upstream's (Laravel's) words: one entry per bad field, each a list of
 * messages, e.g. `{ ip: ["The ip must be a valid IP address."] }`.
 */
export type FieldErrors = Record<string, string[]>;

type FieldResult<T> = { ok: true; value: T } | { ok: false; message: string };
export type Field<T> = (value: unknown, name: string) => FieldResult<T>;
type FieldValue<F> = F extends Field<infer T> ? T : never;
export type Parsed<S extends Record<string, Field<unknown>>> = { [K in keyof S]: FieldValue<S[K]> };

export function parseFields<S extends Record<string, Field<unknown>>>(
  source: unknown,
  spec: S,
): { ok: true; value: Parsed<S> } | { ok: false; errors: FieldErrors } {
  const input = isPlainObject(source) ? source : {};
  const value: Record<string, unknown> = {};
  const errors: FieldErrors = {};
  for (const [name, field] of Object.entries(spec)) {
    const result = field(input[name], name);
    if (result.ok) value[name] = result.value;
    else errors[name] = [result.message];
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, value: value as Parsed<S> };
}

const ok = <T>(value: T): FieldResult<T> => ({ ok: true, value });
const fail = (message: string): FieldResult<never> => ({ ok: false, message });

/** Laravel turns empty strings into null before validating, so "" is as missing as absent. */
function isMissing(value: unknown): boolean {
  return value === undefined || value === null || value === "";
}

function required<T>(check: Field<T>): Field<T> {
  return (value, name) => (isMissing(value) ? fail(`The ${name} field is required.`) : check(value, name));
}

export function optional<T>(field: Field<T>): Field<T | undefined> {
  return (value, name) => (isMissing(value) ? ok(undefined) : field(value, name));
}

function fromSchema<T>(schema: z.ZodType<T>, message: (name: string) => string): Field<T> {
  return required((value, name) => {
    const parsed = schema.safeParse(value);
    return parsed.success ? ok(parsed.data) : fail(message(name));
  });
}

const selectedIsInvalid = (name: string): string => `The selected ${name} is invalid.`;

export const ipAddress: Field<string> = fromSchema(ipSchema, (name) => `The ${name} must be a valid IP address.`);

export const productType: Field<ProductType> = fromSchema(productTypeSchema, selectedIsInvalid);

export const litespeedVariant: Field<LitespeedVariant> = fromSchema(litespeedVariantSchema, selectedIsInvalid);

/** Months, as a JSON integer: a string "12" is refused so a client sending the wrong type finds out here. */
export const billingCycle: Field<BillingCycleMonths> = fromSchema(
  billingCycleMonthsSchema,
  (name) => `The ${name} must be one of ${BILLING_CYCLE_MONTHS.join(", ")}.`,
);

export const bundleId: Field<BundleId> = required((value, name) =>
  typeof value === "string" && isBundleId(value) ? ok(value) : fail(selectedIsInvalid(name)),
);

export const text: Field<string> = required((value, name) =>
  typeof value === "string" && value.trim() !== "" ? ok(value) : fail(`The ${name} must be a string.`),
);

export const password: Field<string> = required((value, name) => {
  if (typeof value !== "string") return fail(`The ${name} must be a string.`);
  return value.length >= 8 ? ok(value) : fail(`The ${name} must be at least 8 characters.`);
});

export const emailAddress: Field<string> = fromSchema(z.email(), (name) => `The ${name} must be a valid email address.`);

export function exactly<T extends string>(expected: T): Field<T> {
  return required((value, name) => (value === expected ? ok(expected) : fail(selectedIsInvalid(name))));
}

function number(check: (n: number, name: string) => FieldResult<number>): Field<number> {
  return required((value, name) =>
    typeof value === "number" && Number.isFinite(value) ? check(value, name) : fail(`The ${name} must be a number.`),
  );
}

export function numberBetween(min: number, max: number): Field<number> {
  return number((n, name) => (n >= min && n <= max ? ok(n) : fail(`The ${name} must be between ${min} and ${max}.`)));
}

export function numberAtLeast(min: number): Field<number> {
  return number((n, name) => (n >= min ? ok(n) : fail(`The ${name} must be at least ${min}.`)));
}

export const positiveAmount: Field<number> = number((n, name) =>
  positiveAmountSchema.safeParse(n).success ? ok(n) : fail(`The ${name} must be greater than 0.`),
);
