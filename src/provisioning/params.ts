import { createHash } from "node:crypto";
import { z } from "zod";
import { BILLING_CYCLES, type BillingCycle } from "../catalog/catalog.js";
import { ipSchema } from "../vocabulary/products.js";
import { customerEmailSchema, dateSchema, idSchema, printableText } from "../intake/event-schema.js";
import { cycleFromMonths, normalizeDate } from "../webhooks/adapters/panel-values.js";

/**
 * The parameters of the provisioning API (service-contract.md section 8), as panels send them:
 * form fields or query strings (everything a string), or JSON. Unknown parameters are ignored;
 * a parameter sent twice (`a=1&a=2`) is refused rather than guessed.
 */

/**
 * Blank form fields and JSON nulls are absent: a panel sends `next_due_date=` or
 * `"next_due_date": null` for "none". A required parameter sent so is refused as missing.
 */
const absentToUndefined = (v: unknown) => (v === null || (typeof v === "string" && v.trim() === "") ? undefined : v);
const once = () => z.unknown().refine((v) => !Array.isArray(v), { error: "must be given once" });
const single = <T extends z.ZodType>(schema: T) => z.preprocess(absentToUndefined, once().pipe(schema));
// The inner optional() takes what the preprocess made undefined (an outer one alone sees only a
// missing key); the outer one makes the key optional in the types and the OpenAPI document.
const optional = <T extends z.ZodType>(schema: T) => z.preprocess(absentToUndefined, once().pipe(schema).optional()).optional();

const billingCycle = z
  .union([z.string(), z.number()])
  .transform((v, ctx) => {
    const s = String(v).trim().toLowerCase();
    // Months as plain digits only: "012" or "1.0" are refused, not read as a number.
    const cycle = (BILLING_CYCLES as readonly string[]).includes(s) ? (s as BillingCycle) : /^[1-9]\d*$/.test(s) ? cycleFromMonths(Number(s)) : undefined;
    if (!cycle) {
      ctx.addIssue({ code: "custom", message: `must be one of ${BILLING_CYCLES.join(", ")}, or the months 1, 3, 6, 12, 24, 36` });
      return z.NEVER;
    }
    return cycle;
  });

/** Panels' dates: ISO 8601, or "2026-12-31 00:00:00" as WHMCS and Blesta write them. */
const panelDate = z.string().transform((s) => normalizeDate(s) as string).pipe(dateSchema);

const licenseKey = z.string({ error: "must be a licence key" }).trim().min(1).max(64);

/** Names the licence on every call but create: `license_key`, or the panel's `service_identifier`. */
const target = {
  license_key: optional(licenseKey),
  service_identifier: optional(idSchema),
};

function requireTarget(v: { license_key?: string; service_identifier?: string }, ctx: z.RefinementCtx) {
  if (v.license_key === undefined && v.service_identifier === undefined) {
    ctx.addIssue({ code: "custom", path: ["license_key"], message: "license_key or service_identifier is required" });
  }
}

export const createParams = z
  .object({
    // Upmind's Generic provider sends it only "if known up-front": derived when absent (derivedServiceIdentifier).
    service_identifier: optional(idSchema),
    package_identifier: single(idSchema),
    ip: single(ipSchema),
    customer_email: optional(customerEmailSchema),
    customer_name: optional(printableText(200)),
    billing_cycle: optional(billingCycle),
    // Upmind's Generic provider sends the months under this name.
    billing_cycle_months: optional(billingCycle),
    next_due_date: optional(panelDate),
  })
  .superRefine((p, ctx) => {
    // Two names for one thing: when both are given they must agree, or neither is taken.
    if (p.billing_cycle !== undefined && p.billing_cycle_months !== undefined && p.billing_cycle !== p.billing_cycle_months) {
      const message = `billing_cycle (${p.billing_cycle}) and billing_cycle_months (${p.billing_cycle_months}) disagree; give one, or both alike`;
      ctx.addIssue({ code: "custom", path: ["billing_cycle"], message });
      ctx.addIssue({ code: "custom", path: ["billing_cycle_months"], message });
    }
  })
  .transform(({ billing_cycle_months, ...p }) => ({ ...p, billing_cycle: p.billing_cycle ?? billing_cycle_months ?? ("monthly" as const) }));

export const targetParams = z.object(target).superRefine(requireTarget);

/**
 * How a call still at work after PROVISION_WAIT_SECONDS is answered: `202` (the default, the
 * contract's `202 pending`), or `error`: `503` with Retry-After, for a caller that takes any 2xx
 * carrying a license_key as done (Upmind's Generic provider), so it records a failure to retry
 * instead of a licence that may still be refused.
 */
export const onPendingParam = z.object({ on_pending: optional(z.enum(["202", "error"], { error: 'must be "202" or "error"' })) });

export const renewParams = z.object({ ...target, next_due_date: optional(panelDate) }).superRefine(requireTarget);

export const changeIpParams = z.object({ ...target, new_ip: single(ipSchema) }).superRefine(requireTarget);

export const changePackageParams = z.object({ ...target, package_identifier: single(idSchema) }).superRefine(requireTarget);

export type CreateParams = z.output<typeof createParams>;
export type TargetParams = z.output<typeof targetParams>;

/**
 * Where the intake's rules name an event field, the API names its own parameter: a refusal
 * must point at what the panel sent.
 */
export function paramOf(eventPath: string, keyParam: "license_key" | "service_identifier"): string {
  switch (eventPath) {
    case "service.id":
      return keyParam;
    case "service.product_id":
    case "changes.product_id":
      return "package_identifier";
    case "service.ip":
      return "ip";
    case "changes.ip":
      return "new_ip";
    case "service.billing_cycle":
      return "billing_cycle";
    case "service.customer.email":
      return "customer_email";
    case "service.customer.name":
      return "customer_name";
    case "service.next_due_date":
      return "next_due_date";
    default:
      return eventPath;
  }
}

/**
 * A service identifier for a create that carries none (Upmind's Generic provider sends one only
 * "if known up-front"): the same for every retry of the same order, so a retried create buys
 * nothing. An order is one licence of one package for one customer at one IP (one IP holds one
 * licence of a type), so those three name it; the customer's e-mail in lower case, the IP in the
 * canonical form the schema gave it.
 */
export function derivedServiceIdentifier(p: { customer_email?: string; package_identifier: string; ip: string }): string {
  const basis = `${(p.customer_email ?? "").trim().toLowerCase()}|${p.package_identifier}|${p.ip}`;
  return `auto-${createHash("sha256").update(basis).digest("hex").slice(0, 32)}`;
}
