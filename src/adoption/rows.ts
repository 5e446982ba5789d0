import { z } from "zod";
import { BILLING_CYCLES, type BillingCycle } from "../catalog/catalog.js";
import { customerEmailSchema, dateSchema, idSchema, printableText } from "../intake/event-schema.js";
import { ipSchema } from "../vocabulary/products.js";
import { PROVIDER_NAMES } from "../vocabulary/provider-names.js";
import type { FieldErrors } from "../validation/field-errors.js";

/**
 * One row of an import (`POST /admin/adopt`, `license-bridge adopt <file>`): a service as the
 * billing panel has it. The column names are the provisioning API's (service-contract.md
 * section 8), so a panel's export maps onto them the way its module does.
 */
export const ADOPTION_COLUMNS = [
  "service_identifier",
  "package_identifier",
  "ip",
  "customer_email",
  "customer_name",
  "billing_cycle",
  "next_due_date",
  "status",
  "provider",
] as const;

/** How the panel sees the service, in our words. Panels spell these many ways (see PANEL_STATUSES). */
export const PANEL_STATUSES = ["active", "suspended", "pending", "terminated"] as const;
export type PanelStatus = (typeof PANEL_STATUSES)[number];

/** Panels' own status words (WHMCS, Blesta, FOSSBilling, Paymenter, HostBill), lower-case with separators removed. */
const STATUS_WORDS: Readonly<Record<string, PanelStatus>> = {
  active: "active",
  suspended: "suspended",
  pending: "pending",
  pendingsetup: "pending",
  inreview: "pending",
  failedsetup: "pending",
  terminated: "terminated",
  cancelled: "terminated",
  canceled: "terminated",
  fraud: "terminated",
  completed: "terminated",
};

/** A CSV's empty cell and a JSON null mean "not given". */
const absent = (v: unknown) => (v === null || (typeof v === "string" && v.trim() === "") ? undefined : v);
const optional = <T extends z.ZodType>(schema: T) => z.preprocess(absent, schema.optional());
const required = <T extends z.ZodType>(schema: T) => z.preprocess(absent, schema);

/** The webhook's six cycle words, as panels print them too ("Semi-Annually", "Annually"), or the months. */
const billingCycle = z.union([z.string(), z.number()], { error: "is required" }).transform((v, ctx) => {
  const s = String(v).trim().toLowerCase().replace(/[\s_-]/g, "");
  const byMonths: Record<string, BillingCycle> = { "1": "monthly", "3": "quarterly", "6": "semiannually", "12": "annually", "24": "biennially", "36": "triennially" };
  const cycle = (BILLING_CYCLES as readonly string[]).includes(s) ? (s as BillingCycle) : byMonths[s];
  if (!cycle) {
    ctx.addIssue({ code: "custom", message: `must be one of ${BILLING_CYCLES.join(", ")}, or the months 1, 3, 6, 12, 24, 36` });
    return z.NEVER;
  }
  return cycle;
});

/** ISO 8601, or "2026-12-31 00:00:00" as WHMCS, Blesta and HostBill export it (UTC); an all-zero date is none. */
const panelDate = z
  .string()
  .transform((s) => {
    const t = s.trim();
    const m = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}(?::\d{2})?)$/.exec(t);
    return m ? `${m[1]}T${m[2]}Z` : t;
  })
  .pipe(dateSchema);

const panelStatus = z.string().transform((v, ctx) => {
  const status = STATUS_WORDS[v.trim().toLowerCase().replace(/[\s_-]/g, "")];
  if (!status) {
    ctx.addIssue({ code: "custom", message: "must be active, suspended, pending, terminated or cancelled (or the panel's own word for one)" });
    return z.NEVER;
  }
  return status;
});

export const adoptionRowSchema = z.strictObject({
  service_identifier: required(idSchema),
  package_identifier: required(idSchema),
  ip: required(ipSchema),
  customer_email: optional(customerEmailSchema),
  customer_name: optional(printableText(200)),
  billing_cycle: required(billingCycle),
  next_due_date: optional(z.preprocess((v) => (typeof v === "string" && /^0000-00-00/.test(v.trim()) ? undefined : v), panelDate.optional())),
  status: optional(panelStatus),
  /** Who the panel says sells it; without it, the product's provider (which it must be, when given). */
  provider: optional(z.enum(PROVIDER_NAMES, { error: `must be one of ${PROVIDER_NAMES.join(", ")}` })),
});

export type AdoptionRow = Omit<z.output<typeof adoptionRowSchema>, "status"> & { status: PanelStatus };

/** Most rows a request or file may hold: a large panel's whole book, with room to spare. */
export const MAX_ADOPTION_ROWS = 200_000;

export const adoptBodySchema = z.strictObject({
  services: z.array(z.unknown(), { error: "must be an array of services" }).max(MAX_ADOPTION_ROWS, { error: `must hold at most ${MAX_ADOPTION_ROWS} services` }),
  apply: z.boolean({ error: "must be true or false" }).optional(),
  buy: z.boolean({ error: "must be true or false" }).optional(),
  mail: z.boolean({ error: "must be true or false" }).optional(),
});

/** A field's place as the operator reads it: `services[3].ip`. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : `${out ? "." : ""}${String(p)}`;
  return out || "(body)";
}

/** The row has no value at `path` (missing, null, or a blank cell): what is wrong is that it is missing. */
function isAbsent(raw: unknown, path: readonly PropertyKey[]): boolean {
  if (path.length !== 1 || raw === null || typeof raw !== "object") return false;
  return absent((raw as Record<PropertyKey, unknown>)[path[0]!]) === undefined;
}

export type RowsResult = { ok: true; rows: AdoptionRow[] } | { ok: false; errors: FieldErrors };

/**
 * Every row checked, every wrong field named (`<prefix>[<index>].<field>`), and each service
 * identifier once: two rows for one service would make two plans for one licence.
 */
export function parseRows(input: readonly unknown[], prefix = "services"): RowsResult {
  const errors: FieldErrors = Object.create(null) as FieldErrors;
  const add = (path: PropertyKey[], message: string) => (errors[fieldPath([prefix, ...path])] ??= []).push(message);
  const rows: AdoptionRow[] = [];
  const firstRow = new Map<string, number>();
  input.forEach((raw, i) => {
    const parsed = adoptionRowSchema.safeParse(raw);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        if (issue.code === "unrecognized_keys") for (const key of issue.keys) add([i, ...issue.path, key], "is not a known column");
        else add([i, ...issue.path], isAbsent(raw, issue.path) ? "is required" : issue.message);
      }
      return;
    }
    const row = { ...parsed.data, status: parsed.data.status ?? "active" } as AdoptionRow;
    const first = firstRow.get(row.service_identifier);
    if (first !== undefined) add([i, "service_identifier"], `service ${row.service_identifier} is also in ${fieldPath([prefix, first])}; one row per service`);
    else firstRow.set(row.service_identifier, i);
    rows.push(row);
  });
  return Object.keys(errors).length ? { ok: false, errors } : { ok: true, rows };
}
