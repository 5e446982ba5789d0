import { z } from "zod";
import { billingCycleSchema } from "../catalog/catalog.js";
import { ipSchema } from "../vocabulary/products.js";
import { EVENT_TYPES, type EventType } from "../vocabulary/event-types.js";
import { formatControlIn, hasControlCharacter } from "../vocabulary/text.js";
import { atMost } from "../validation/length.js";

export { EVENT_TYPES, type EventType };

/** The longest id the bridge takes (a service's, a product's), wherever one comes in: panels, paths, the CLI. */
export const ID_MAX = 64;
const ID_CHARACTERS = z.string().regex(/^[\w.:-]+$/, { error: "may hold only letters, digits and . _ : -" });

/** Panels send ids as strings or numbers; we keep them as strings. */
export const idSchema = z
  .union([z.string().trim().min(1).max(ID_MAX, atMost(ID_MAX)), z.number().int().nonnegative()], { error: "must be a non-empty string id" })
  .transform(String)
  .pipe(ID_CHARACTERS);

/**
 * A service id as an operator names one (a path's `:id`, a CLI argument): the intake's rule, so
 * no id refused here can belong to a service, and none is stored or audited before it is checked.
 */
export const serviceIdText = z.string().min(1, { error: "must not be empty" }).max(ID_MAX, atMost(ID_MAX)).pipe(ID_CHARACTERS);

export const dateSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/, { error: "must be an ISO 8601 date, e.g. 2026-12-31" })
  .refine(isCalendarDate, { error: "is not a real date" });

/** Date.parse rolls 2026-02-31 over to 3 March; a date must exist as written. */
function isCalendarDate(s: string): boolean {
  if (Number.isNaN(Date.parse(s))) return false;
  const [y, m, d] = s.slice(0, 10).split("-").map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d));
  return day.getUTCFullYear() === y && day.getUTCMonth() === m - 1 && day.getUTCDate() === d;
}

/**
 * Printable text: a control character (NUL, ESC, CR, ...) has no business in a name that reaches
 * a mail, nor an invisible format character (U+202E and the other bidirectional controls), which
 * would make the name in the mail's header read as something else. Refused, not stripped: the
 * panel's record is what is wrong, and a 422 naming the field gets it corrected there.
 */
export const printableText = (max: number) =>
  z
    .string()
    .trim()
    .max(max)
    .refine((s) => !hasControlCharacter(s), { error: "must not contain control characters" })
    .refine((s) => formatControlIn(s) === undefined, {
      error: (issue) => `must not contain ${formatControlIn(String(issue.input))} (an invisible bidirectional or formatting control)`,
    });

export const customerEmailSchema = z.email({ error: "must be an e-mail address" }).max(254);

const customerSchema = z.object({
  email: customerEmailSchema,
  name: printableText(200).optional(),
});

const serviceSchema = z.object({
  id: idSchema,
  product_id: idSchema.optional(),
  billing_cycle: billingCycleSchema.optional(),
  ip: ipSchema.optional(),
  customer: customerSchema.optional(),
  next_due_date: dateSchema.optional(),
});

const changesSchema = z.object({
  ip: ipSchema.optional(),
  product_id: idSchema.optional(),
});

/** Fields each event type cannot do without, as [path, message]. */
const REQUIRED: Record<EventType, [string[], string][]> = {
  "service.created": [
    [["service", "product_id"], "is required"],
    [["service", "billing_cycle"], "is required"],
    [["service", "ip"], "is required"],
    [["service", "customer", "email"], "is required: the install command is mailed there"],
  ],
  "service.renewed": [],
  "service.suspended": [],
  "service.unsuspended": [],
  "service.terminated": [],
  "service.ip_changed": [[["changes", "ip"], "is required for service.ip_changed"]],
  "service.product_changed": [[["changes", "product_id"], "is required for service.product_changed"]],
};

function eventSchema(required: Record<EventType, [string[], string][]>) {
  return z
    .object({
      type: z.enum(EVENT_TYPES, { error: `must be one of ${EVENT_TYPES.join(", ")}` }),
      service: serviceSchema,
      changes: changesSchema.optional(),
    })
    .superRefine((event, ctx) => {
      for (const [path, message] of required[event.type]) {
        let v: unknown = event;
        for (const p of path) v = v === undefined || v === null ? undefined : (v as Record<string, unknown>)[p];
        if (v === undefined) ctx.addIssue({ code: "custom", path, message });
      }
    });
}

/** The body of `POST /webhooks/billing` (service-contract.md section 2). */
export const billingEventSchema = eventSchema(REQUIRED);

/**
 * An event translated from a panel's own webhook. Panels' account hooks often carry no customer
 * e-mail (HostBill, Blesta): the licence is still bought, and its history says no mail was sent.
 */
export const panelEventSchema = eventSchema({
  ...REQUIRED,
  "service.created": REQUIRED["service.created"].filter(([path]) => path.join(".") !== "service.customer.email"),
});

export type BillingEvent = z.output<typeof billingEventSchema>;

export { fieldErrors, type FieldErrors } from "../validation/field-errors.js";
