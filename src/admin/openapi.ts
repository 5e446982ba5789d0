import { readFileSync } from "node:fs";
import express, { type Router } from "express";
import { z } from "zod";
import { JOB_STATES } from "../vocabulary/jobs.js";
import { DRIFT_KINDS, type ReconcileResult } from "../reconcile/reconcile.js";
import { SERVICE_STATUSES } from "../vocabulary/service-statuses.js";
import { PROVIDER_NAMES } from "../vocabulary/provider-names.js";
import { billingEventSchema, EVENT_TYPES } from "../intake/event-schema.js";
import { MAX_WEBHOOK_BYTES } from "../webhooks/route.js";
import { TOLERANCE_SECONDS } from "../webhooks/signature.js";
import {
  balanceQuerySchema,
  historyQuerySchema,
  jobIdSchema,
  jobsQuerySchema,
  licensesExportQuerySchema,
  licensesQuerySchema,
  SERVICE_HISTORY_LIMIT,
} from "./admin-routes.js";
import { reconcileBodySchema } from "./reconcile-routes.js";
import { ADOPTION_ACTIONS, type AdoptionPlan } from "../adoption/plan.js";
import { adoptBodySchema, adoptionRowSchema } from "../adoption/rows.js";
import { auditQuerySchema, type auditView } from "./audit-routes.js";
import { forecastQuerySchema } from "./forecast-routes.js";
import type { Forecast } from "../renewals/forecast.js";
import { AUDIT_OUTCOMES } from "../vocabulary/audit.js";
import { ROLES } from "../vocabulary/roles.js";
import { changeIpBodySchema } from "./actions.js";
import { resendMailBodySchema } from "./direct-actions.js";
import { serviceIdSchema } from "./ids.js";
import { ERROR_CODE_NAMES, ERROR_CODES } from "../vocabulary/error-codes.js";
import { changeIpParams, changePackageParams, createParams, renewParams, targetParams } from "../provisioning/params.js";
import type { ProvisionedLicense } from "../provisioning/answers.js";
import { PROVISIONING_CALLS } from "../provisioning/provisioning.js";
import type { balanceView, historyView, jobView, licenseView, modulesView, queuedMailView, queueView } from "./views.js";

/**
 * The OpenAPI 3.1 description of the HTTP API, built from the zod schemas that validate the
 * requests (so the document cannot drift from the checks) and from response schemas below,
 * which the compiler holds to the views the routes actually send.
 */

type JsonSchema = Record<string, unknown>;

/** A zod schema as a JSON Schema 2020-12 object (OpenAPI 3.1's dialect), without its `$schema`. */
export function jsonSchema(schema: z.ZodType, io: "input" | "output" = "input"): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" }) as JsonSchema;
  return rest;
}

// ---- Response shapes -----------------------------------------------------------------------

/** What a webhook answers while the database cannot take the event. */
const UNAVAILABLE =
  "The database is busy (another process holds its write lock) or its file is gone; nothing stored. Send the event again after the Retry-After header's seconds";

const isoDateTime = z.string().describe("ISO 8601 date and time");
const nullableIso = isoDateTime.nullable();

export const errorCodeSchema = z
  .enum(ERROR_CODE_NAMES)
  .describe(
    "Stable, machine-readable: match on this, not on `error`. " + Object.entries(ERROR_CODES).map(([code, meaning]) => `\`${code}\`: ${meaning}`).join(" "),
  );

export const errorSchema = z
  .looseObject({ error: z.string().describe("What went wrong, for people"), code: errorCodeSchema })
  .describe("Every error answer: the real status code and this body, sometimes with details");
export const validationErrorSchema = errorSchema
  .extend({
    error: z.literal("Validation error"),
    errors: z.record(z.string(), z.array(z.string())).describe('Field path (e.g. "service.ip") → messages'),
    field: z.string().optional().describe("Admin API: the first wrong field (e.g. limit, cursor), as in errors"),
  })
  .describe("A schema or business-rule violation");

export const webhookAnswerSchema = z.object({
  event_id: z.string().describe("The bridge's id of the stored event"),
  status: z.enum(["accepted", "duplicate"]),
});

export const licenseSchema = z.object({
  service_id: z.string(),
  product_id: z.string(),
  provider: z.enum(PROVIDER_NAMES).describe("Who sells the licence: the reseller, cPanel's Manage2 or CloudLinux's CLN"),
  ip: z.string(),
  type: z.string().nullable().describe("Upstream licence type (null for a bundle)"),
  variant: z.string().nullable().describe("LiteSpeed variant, e.g. litespeed4"),
  bundle: z.string().nullable(),
  bundle_key: z.string().nullable(),
  status: z.enum(SERVICE_STATUSES),
  billing_cycle: z.string(),
  expires_at: nullableIso.describe("When the upstream term ends"),
  paid_until: nullableIso.describe("Up to when the customer has paid"),
  companions: z.array(z.string()).describe("Free licences that come with a cpanel licence"),
  ip_changes: z.number().int(),
  customer: z.object({ email: z.string().nullable(), name: z.string().nullable() }),
  last_error: z.string().nullable(),
  module: z.string().nullable().describe('The panel module that last called the provisioning API about it, "panel/version" from its User-Agent'),
  created_at: nullableIso,
  updated_at: nullableIso,
});

export const historyItemSchema = z.object({
  at: nullableIso,
  action: z.string(),
  detail: z.string().nullable(),
  event_id: z.string().nullable(),
  job_id: z.number().int().nullable(),
});

export const serviceDetailSchema = licenseSchema.extend({
  history: z
    .array(historyItemSchema)
    .describe(`The service's latest ${SERVICE_HISTORY_LIMIT} events and what came of them, oldest first; the earlier ones page through /admin/services/{id}/history`),
  history_total: z.number().int().describe("How many history entries the service has in all"),
  history_next_cursor: z.string().nullable().describe("The cursor of /admin/services/{id}/history's page of the entries before these; null: there are none"),
});

export const queueSchema = z.object({
  depth: z.number().int().describe("Jobs queued (due now, or waiting for a retry's time)"),
  oldest_due_at: nullableIso.describe("When the due job that has waited longest to start was due; null when none waits"),
  lag_seconds: z.number().int().describe("How long that job has waited (0 when none waits); QUEUE_LAG_ALERT_MINUTES alerts on it"),
  queued_by_kind: z.record(z.string(), z.number().int()).describe("The queued jobs by kind"),
});

export const jobSchema = z.object({
  id: z.number().int(),
  kind: z.string(),
  service_id: z.string().nullable(),
  event_id: z.string().nullable(),
  state: z.enum(JOB_STATES),
  attempts: z.number().int(),
  max_attempts: z.number().int(),
  last_error: z.string().nullable(),
  skipped: z.string().nullable().describe("A succeeded job that did not do its work, and why (e.g. a renewal of a service being terminated)"),
  run_at: nullableIso,
  created_at: nullableIso,
  updated_at: nullableIso,
});

export const modulesSchema = z.object({
  current_version: z.string().describe("The version of the panel modules shipped with this release"),
  min_version: z.string().describe("The oldest module version this bridge supports"),
  modules: z.array(
    z.object({
      module: z.string().describe('"panel/version", from the User-Agent the module sends'),
      panel: z.string(),
      version: z.string(),
      services: z.number().int().describe("Services this module called about last"),
      outdated: z.boolean().describe("Older than min_version: install the module shipped with this release"),
    }),
  ),
});

export const balanceSchema = z.object({
  balance: z.number().nullable().describe("The reseller balance of the bridge's own account; null while it is unknown (see reason)"),
  checked_at: nullableIso.describe("When the reseller was last asked, whatever it answered; null when it was not asked"),
  reason: z
    .string()
    .nullable()
    .describe("Why balance is null (RESELLER_ACCOUNT_ID not set, the token lacks the admin role, the reseller unreachable, ...); null when it is not"),
});

export const driftItemSchema = z.object({
  kind: z.enum(DRIFT_KINDS),
  provider: z.enum(PROVIDER_NAMES).describe("Whose licence list it was found in: the service's provider, or the one holding a licence no service accounts for"),
  service_id: z.string().nullable(),
  ip: z.string(),
  type: z.string(),
  expected: z.string(),
  actual: z.string(),
  fixable: z.boolean(),
  fix: z.string().optional(),
});
export const handledItemSchema = driftItemSchema.extend({ error: z.string().optional() });
export const reconcileResultSchema = z.object({
  drift: z.array(driftItemSchema).describe("Every difference found, before any repair"),
  fixed: z.array(handledItemSchema).describe("Repaired by this run (empty without fix)"),
  manual: z.array(handledItemSchema).describe("Left for a person: purchases, unknown licences, failed repairs"),
});

export const adoptionPlanSchema = z.object({
  plan: z
    .array(
      z.object({
        service_identifier: z.string(),
        provider: z
          .enum(PROVIDER_NAMES)
          .nullable()
          .describe("The row's provider: its product's (the row's provider column must agree); the column's for an unknown product; null when neither names one"),
        action: z.enum(ADOPTION_ACTIONS).describe("adopt: held by its provider, free, as the product wants it; buy: not held; conflict: for a person; managed: known already"),
        reason: z.string(),
        cost: z.number().nullable().describe("adopt: 0; buy: the price for the row's cycle (null when unknown); otherwise null"),
      }),
    )
    .describe("One item per row, in the rows' order"),
  orphans: z
    .array(
      z.object({
        provider: z.enum(PROVIDER_NAMES),
        ip: z.string(),
        type: z.string(),
        monthly_cost: z.number().nullable().describe("The reseller's price list for its type; for Manage2 and CLN, the price_per_month of the catalogue product that sells it"),
      }),
    )
    .describe("Licences a configured provider holds that no row and no service claims"),
});
export const auditEntrySchema = z.object({
  id: z.number().int().describe("Increasing: a later entry has a larger id"),
  at: isoDateTime,
  actor: z.string().describe('Who: an operator of OPERATORS_FILE, "admin" (ADMIN_TOKEN), or "cli:<OS user>"'),
  action: z.string().describe("What, as <thing>.<verb>: job.retry, reconcile.fix, reconcile.repair, renew.due, reseller.credit, ..."),
  service_id: z.string().nullable(),
  job_id: z.number().int().nullable(),
  outcome: z.enum(AUDIT_OUTCOMES).describe("ok: done; refused: the role or the state did not allow it, nothing changed; failed: it could not be carried out"),
  detail: z.string().nullable(),
});
export const auditPageSchema = z.object({
  audit: z.array(auditEntrySchema).describe("Newest first"),
  next_cursor: z.string().nullable().describe("The cursor of the next page; null on the last"),
  total: z.number().int().describe("Entries matching the filters, on every page"),
});
export const forecastSchema = z.object({
  days: z.number().int(),
  balance: z.number().nullable().describe("The reseller balance (as GET /admin/balance); null while it is unknown"),
  due: z.array(
    z.object({
      service_id: z.string(),
      provider: z.enum(PROVIDER_NAMES).describe("Who the cost goes to: the reseller (a renewal bought from the balance), or Manage2 or CLN (billed to their own account while the licence is active)"),
      ip: z.string(),
      type: z.string().describe("The licence type, or the bundle id"),
      due_at: z.string().describe("When the renewal sweep will queue it: the term end less RENEWAL_LEAD_DAYS, or now when that is past"),
      cost: z
        .number()
        .nullable()
        .describe(
          "What the renewal costs; for Manage2 and CLN, what they bill over the term (price_per_month times its months); null when its product has no price (a live catalogue product without price_per_month)",
        ),
    }),
  ),
  total_cost: z.number().nullable().describe("Every provider's costs together; null when any cost is unknown"),
  shortfall: z.number().nullable().describe("max(0, the reseller's cost - balance): Manage2 and CLN bill their own accounts; null when either is unknown"),
  by_provider: z
    .partialRecord(z.enum(PROVIDER_NAMES), z.object({ renewals: z.number().int(), cost: z.number().nullable().describe("null when any of its costs is unknown") }))
    .describe("Each provider with renewals in the window: how many, and the money it will take"),
  unpriced_products: z.array(z.string()).describe("Catalogue products of due renewals without price_per_month: set them to know the cost"),
  prices: z.enum(["sandbox", "catalogue"]).describe('"sandbox": the sandbox\'s price list; "catalogue": each product\'s price_per_month in the catalogue'),
});
/** What `POST /admin/services/:id/resend-install-mail` answers (202). */
export const queuedMailSchema = z.object({ job_id: z.number().int().describe("The mail_install job that sends the mail; GET /admin/jobs shows how it went") });
/** What `POST /admin/services/:id/suspend|unsuspend|change-ip` answer (202): the event made, and its job. */
export const licenceActionSchema = z.object({
  event_id: z.string(),
  job_id: z.number().int().nullable().describe("the job that carries it out; null when there is nothing to do"),
  nothing_to_do: z.string().nullable().describe("why nothing needs doing (the service already is, or is about to be, so)"),
});

const checkSchema = z.looseObject({ status: z.enum(["ok", "failed", "degraded"]), detail: z.string().optional() });
const checksSchema = z.object({
  database: checkSchema,
  migrations: checkSchema,
  upstream: checkSchema.describe("The reseller: its API's URLs answer (any HTTP answer counts)"),
  manage2: checkSchema.optional().describe("cPanel Manage2, when configured: it answers XMLgroupInfo; degraded when it refuses the credentials"),
  cln: checkSchema.optional().describe("CloudLinux CLN, when configured: it answers a check of a documentation IP; degraded when it refuses the credentials"),
  smtp: checkSchema.optional().describe("The SMTP server, when configured: degraded, never failed, when out of reach"),
});
export const readySchema = z.object({
  status: z.literal("ready"),
  degraded: z.array(z.string()).optional().describe('What works but not as it should, e.g. "manage2: cPanel Manage2 answered but refused XMLgroupInfo: ..."'),
  checks: checksSchema,
});
export const notReadySchema = z.object({
  status: z.literal("not ready"),
  reasons: z.array(z.string()).describe('One per failed check, naming it, e.g. "upstream: ... unreachable (ECONNREFUSED)", "manage2: cPanel Manage2 unreachable (...)"'),
  checks: checksSchema,
});

export const provisionedLicenseSchema = z.object({
  success: z.literal(true),
  license_key: z.string().describe("The bridge's stable name of the licence: returned by create, accepted by every other call"),
  service_identifier: z.string().describe("The panel's service id"),
  package_identifier: z.string().describe("The product id of the catalogue"),
  provider: z.enum(PROVIDER_NAMES).describe("Who sells the licence: the reseller, cPanel's Manage2 or CloudLinux's CLN"),
  status: z.enum(SERVICE_STATUSES),
  ip: z.string(),
  type: z.string().nullable().describe("Upstream licence type (null for a bundle)"),
  variant: z.string().nullable(),
  bundle: z.string().nullable(),
  expires_at: nullableIso.describe("When the upstream term ends"),
  paid_until: nullableIso.describe("Up to when the customer has paid"),
  install_command: z
    .string()
    .nullable()
    .describe("Once the licence is active (one line per licence of a bundle); null otherwise. The reseller's from its API; a Manage2 or CLN licence's from its catalogue product's install_command"),
  ip_changes_left: z.number().int().nullable().describe("null when the product allows unlimited IP changes"),
  last_error: z.string().nullable(),
});
export const provisionPendingSchema = z.object({
  success: z.literal(false),
  status: z.literal("pending"),
  license_key: z.string(),
  message: z.string(),
});
export const provisionErrorSchema = errorSchema
  .extend({
    success: z.literal(false),
    status: z.enum(["blocked", "failed", "cancelled", "pending"]).optional().describe("502: the job's state; 503 with code pending (on_pending=error): still at work"),
    license_key: z.string().optional().describe("502, and 503 with code pending: the licence the call is about"),
    service_identifier: z.string().optional().describe("503 with code pending: the service the call is about"),
    errors: z.record(z.string(), z.array(z.string())).optional().describe("422 only: parameter → messages"),
  })
  .describe("Every error answer of the provisioning API");

// The compiler checks that the documented responses are what the views produce.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const responseShapesMatch: [
  Same<z.output<typeof licenseSchema>, ReturnType<typeof licenseView>>,
  Same<z.output<typeof historyItemSchema>, ReturnType<typeof historyView>>,
  Same<z.output<typeof jobSchema>, ReturnType<typeof jobView>>,
  Same<z.output<typeof reconcileResultSchema>, ReconcileResult>,
  Same<z.output<typeof adoptionPlanSchema>, AdoptionPlan>,
  Same<z.output<typeof provisionedLicenseSchema>, ProvisionedLicense>,
  Same<z.output<typeof modulesSchema>, ReturnType<typeof modulesView>>,
  Same<z.output<typeof balanceSchema>, ReturnType<typeof balanceView>>,
  Same<z.output<typeof queueSchema>, ReturnType<typeof queueView>>,
  Same<z.output<typeof auditEntrySchema>, ReturnType<typeof auditView>>,
  Same<z.output<typeof forecastSchema>, Forecast>,
  Same<z.output<typeof queuedMailSchema>, ReturnType<typeof queuedMailView>>,
] = [true, true, true, true, true, true, true, true, true, true, true, true];
void responseShapesMatch;

// ---- Building blocks -----------------------------------------------------------------------

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonSchema) => ({ content: { "application/json": { schema } } });
const answer = (description: string, schemaName = "Error") => ({ description, ...json(ref(schemaName)) });
/** A page: `{"<key>": [<schema>, ...], "next_cursor", "total"}` (src/admin/paging.ts), with what else the listing answers. */
const pageOf = (key: string, schemaName: string, extra: Record<string, JsonSchema> = {}) => ({
  type: "object",
  properties: {
    ...extra,
    [key]: { type: "array", items: ref(schemaName) },
    next_cursor: { type: ["string", "null"], description: "Pass as `cursor` for the next page; null: this is the last page" },
    total: { type: "integer", description: "How many items match, all pages together" },
  },
  required: [...Object.keys(extra), key, "next_cursor", "total"],
  additionalProperties: false,
});

const ADMIN_SECURITY = [{ adminToken: [] }];
const UNAUTHORIZED = answer("No or wrong `Authorization: Bearer <ADMIN_TOKEN or an operator's token>`");
const TOO_MANY_FAILURES = answer(
  "Too many wrong tokens from this client address (admin API tokens and console logins together, whatever succeeded in between): refused, the right token too, until `Retry-After` (seconds, also `retry_after_seconds`)",
);

/** Every operation behind the admin token may also refuse a client with too many wrong ones. */
function withFailureLimit<T extends Record<string, object>>(paths: T): T {
  for (const operations of Object.values(paths)) {
    for (const op of Object.values(operations) as { responses?: Record<string, unknown> }[]) {
      if (op.responses?.["401"] === UNAUTHORIZED) op.responses["429"] = TOO_MANY_FAILURES;
    }
  }
  return paths;
}
/** Roles (OPERATORS_FILE): a viewer reads, an operator also acts on licences and jobs, an admin also repairs, adopts and runs the reseller's accounts. */
const FORBIDDEN = answer(`The operator's role (${ROLES.join(" < ")}) does not allow this; \`required_role\` names the one needed. Audited as refused.`);
const INVALID = answer("Validation error", "ValidationError");

/** The 422 every action on a service may answer, whoever asks, before its role is checked. */
const BAD_SERVICE_ID = "An id no service can have (over 64 characters, or other than letters, digits and . _ : -): code validation, `errors.id` says why; nothing audited";

/** POST /admin/services/:id/<action>: an operator's action on one licence, with its answer and what else it may answer. */
const serviceAction = (
  operationId: string,
  summary: string,
  o: { description: string; ok: { status: "200" | "202"; description: string; schema: string }; requestBody?: object; more?: Record<string, object> },
) => ({
  post: {
    tags: ["admin"],
    operationId,
    summary,
    description: `${o.description} Needs the operator role; audited.`,
    security: ADMIN_SECURITY,
    parameters: [{ name: "id", in: "path", required: true, description: "The service id, by the intake's rule", schema: jsonSchema(serviceIdSchema) }],
    ...(o.requestBody ? { requestBody: o.requestBody } : {}),
    responses: {
      [o.ok.status]: { description: o.ok.description, ...json(ref(o.ok.schema)) },
      "401": UNAUTHORIZED,
      "403": FORBIDDEN,
      "404": answer("Unknown service"),
      "415": answer("A body that is not application/json"),
      "422": answer(BAD_SERVICE_ID, "ValidationError"),
      ...o.more,
    },
  },
});

/** POST /admin/services/:id/suspend|unsuspend|change-ip: one shape, an operator's event for the deciding core. */
const licenceAction = (operationId: string, summary: string, extra: { requestBody?: object } = {}) =>
  serviceAction(operationId, summary, {
    description: "An event like the panel's, decided by the same rules; its job runs after the answer.",
    ok: { status: "202", description: "Accepted", schema: "LicenceAction" },
    requestBody: extra.requestBody,
    more: { "409": answer("Not now: the same request sent again later will be taken"), "422": answer(`Validation error: the body, or the path's id. ${BAD_SERVICE_ID}`, "ValidationError") },
  });

/** Query parameters from a strict object schema: one per property, required as the schema says. */
function queryParameters(schema: z.ZodType): JsonSchema[] {
  const s = jsonSchema(schema);
  const props = (s.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((s.required ?? []) as string[]);
  return Object.entries(props).map(([name, p]) => ({ name, in: "query", required: required.has(name), schema: p }));
}

const webhookHeaders = [
  {
    name: "webhook-id",
    in: "header",
    required: true,
    description: "Unique per event: the idempotency key. A second delivery with the same id is answered 200 duplicate.",
    schema: jsonSchema(z.string().min(1).max(256)),
  },
  {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    description: `Unix seconds; more than ${TOLERANCE_SECONDS / 60} minutes off is rejected.`,
    schema: jsonSchema(z.string().regex(/^\d+$/)),
  },
  {
    name: "webhook-signature",
    in: "header",
    required: true,
    description:
      "Space-separated `v1,<base64 HMAC-SHA256>` entries over `${webhook-id}.${webhook-timestamp}.${raw body}`, " +
      "keyed by the base64-decoded part of a `whsec_` secret (Standard Webhooks). Any configured secret may match.",
    schema: jsonSchema(z.string().regex(/^v1,\S+( v1,\S+)*$/)),
  },
];

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: string };
    return pkg.version ?? "0.0.0";
  } catch {
    return "0.0.0";
  }
}

// ---- The document --------------------------------------------------------------------------

/** The OpenAPI 3.1 document of every route the service mounts. */
export function openApiDocument(): Record<string, unknown> {
  return {
    openapi: "3.1.0",
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    info: {
      title: "license-bridge",
      version: packageVersion(),
      description:
        "Bridges billing-panel webhooks to a software-licence reseller API. The webhook is signed per Standard Webhooks; " +
        "the admin API takes `Authorization: Bearer <ADMIN_TOKEN>`; health, readiness, metrics and this document need no auth.",
    },
    tags: [
      { name: "webhooks", description: "Events from the billing panel" },
      { name: "admin", description: "The operator's API" },
      { name: "provisioning", description: "For panel modules (WHMCS, Blesta, FOSSBilling, Paymenter, HostBill) and Upmind's Generic software-licence provider" },
      { name: "operations", description: "Health, readiness, metrics, this document" },
    ],
    paths: withFailureLimit({
      "/webhooks/billing": {
        post: {
          tags: ["webhooks"],
          operationId: "receiveBillingEvent",
          summary: "A billing-panel event",
          description:
            `Verified, stored durably and queued before the answer; upstream work happens in the background. Event types: ${EVENT_TYPES.join(", ")}. ` +
            "`service.created` needs service.product_id, billing_cycle, ip and customer.email; `service.ip_changed` needs changes.ip; " +
            "`service.product_changed` needs changes.product_id. Any type but service.created for a service the bridge has never seen is answered 409.",
          parameters: webhookHeaders,
          requestBody: {
            required: true,
            description: `JSON, at most ${MAX_WEBHOOK_BYTES / 1024} KiB`,
            content: { "application/json": { schema: ref("BillingEvent") } },
          },
          responses: {
            "200": { description: "Duplicate: this webhook-id was accepted before; no new work", ...json(ref("WebhookAnswer")) },
            "202": { description: "Accepted: stored durably, work queued", ...json(ref("WebhookAnswer")) },
            "400": answer("Body is not JSON, or webhook-id is too long"),
            "401": answer("Bad or missing signature, or a stale timestamp"),
            "409": answer('"unknown service": the service was never created here; nothing stored, so a retry after the creation works'),
            "413": answer(`Body over ${MAX_WEBHOOK_BYTES / 1024} KiB`),
            "415": answer("Content-Type is not application/json"),
            "422": answer("Schema or business-rule violation (unknown product, bad IP, unknown type, IP change limit)", "ValidationError"),
            "503": answer(UNAVAILABLE),
          },
        },
      },
      ...adapterPaths(),
      ...provisioningPaths(),
      "/admin/services/{id}": {
        get: {
          tags: ["admin"],
          operationId: "getService",
          summary: "A service's licence as the bridge knows it, with its history",
          security: ADMIN_SECURITY,
          parameters: [
            { name: "id", in: "path", required: true, description: "The billing panel's service id", schema: jsonSchema(z.string().min(1)) },
          ],
          responses: {
            "200": { description: "The licence and its latest history", ...json(ref("ServiceDetail")) },
            "401": UNAUTHORIZED,
            "404": answer("Unknown service"),
          },
        },
      },
      "/admin/services/{id}/history": {
        get: {
          tags: ["admin"],
          operationId: "listServiceHistory",
          summary: "A service's history, newest first, a page at a time",
          security: ADMIN_SECURITY,
          parameters: [
            { name: "id", in: "path", required: true, description: "The billing panel's service id", schema: jsonSchema(z.string().min(1)) },
            ...queryParameters(historyQuerySchema),
          ],
          responses: {
            "200": { description: "One page of the history", ...json(pageOf("history", "HistoryItem", { service_id: { type: "string" } })) },
            "401": UNAUTHORIZED,
            "404": answer("Unknown service"),
            "422": INVALID,
          },
        },
      },
      "/admin/licenses": {
        get: {
          tags: ["admin"],
          operationId: "listLicenses",
          summary: "Licences by service id, a page at a time, optionally by status or provider, or found by q",
          description:
            "Keyset pages: walking every page from next_cursor to next_cursor returns each licence at most once, and every licence that " +
            "existed when the walk began exactly once, whatever is added meanwhile. q is an exact match of one key: service id, IP (any " +
            "spelling of the address), customer e-mail (any case) or licence key.",
          security: ADMIN_SECURITY,
          parameters: queryParameters(licensesQuerySchema),
          responses: {
            "200": { description: "One page of the licences", ...json(pageOf("licenses", "License")) },
            "401": UNAUTHORIZED,
            "422": INVALID,
          },
        },
      },
      "/admin/licenses/export": {
        get: {
          tags: ["admin"],
          operationId: "exportLicenses",
          summary: "Every licence (optionally by status, provider or q), one JSON object a line",
          description: "NDJSON, each line a License. Read a page at a time and written as the client reads it, so an export of any size neither holds the service nor the whole list. On SQLite at most two exports read at once; a further one waits its turn before its first line.",
          security: ADMIN_SECURITY,
          parameters: queryParameters(licensesExportQuerySchema),
          responses: {
            "200": { description: "The licences, one a line", content: { "application/x-ndjson": { schema: ref("License") } } },
            "401": UNAUTHORIZED,
            "422": INVALID,
          },
        },
      },
      "/admin/jobs": {
        get: {
          tags: ["admin"],
          operationId: "listJobs",
          summary: "Jobs, newest first, a page at a time, optionally by state, service or kind",
          security: ADMIN_SECURITY,
          parameters: queryParameters(jobsQuerySchema),
          responses: {
            "200": { description: "One page of the jobs", ...json(pageOf("jobs", "Job")) },
            "401": UNAUTHORIZED,
            "422": INVALID,
          },
        },
      },
      "/admin/queue": {
        get: {
          tags: ["admin"],
          operationId: "getQueue",
          summary: "How far the job queue is behind: depth and the oldest due job",
          security: ADMIN_SECURITY,
          responses: {
            "200": { description: "The queue", ...json(ref("Queue")) },
            "401": UNAUTHORIZED,
          },
        },
      },
      "/admin/modules": {
        get: {
          tags: ["admin"],
          operationId: "listModules",
          summary: "The panel modules that call the provisioning API, by version, and whether each is outdated",
          security: ADMIN_SECURITY,
          responses: {
            "200": { description: "The modules", ...json(ref("Modules")) },
            "401": UNAUTHORIZED,
          },
        },
      },
      "/admin/balance": {
        get: {
          tags: ["admin"],
          operationId: "getBalance",
          summary: "The reseller balance of the bridge's own account",
          description:
            "Read through the reseller's admin endpoint (GET /admin/reseller/{id}/balance) for RESELLER_ACCOUNT_ID with RESELLER_ADMIN_TOKEN " +
            "(in sandbox mode: the sandbox's own reseller), and kept 60 s; the same reading as the license_bridge_reseller_balance gauge. " +
            "A balance that cannot be read is answered 200 with balance null and the reason.",
          security: ADMIN_SECURITY,
          parameters: queryParameters(balanceQuerySchema),
          responses: {
            "200": { description: "The balance, or why it is unknown", ...json(ref("Balance")) },
            "401": UNAUTHORIZED,
            "422": INVALID,
          },
        },
      },
      "/admin/audit": {
        get: {
          tags: ["admin"],
          operationId: "listAudit",
          summary: "The audit trail: who did what through the admin API, the CLI and the console, newest first",
          description: "Every change writes its entry in the change's own transaction; refused and failed actions are recorded too. Never pruned.",
          security: ADMIN_SECURITY,
          parameters: queryParameters(auditQuerySchema),
          responses: {
            "200": { description: "One page of entries", ...json(ref("AuditPage")) },
            "401": UNAUTHORIZED,
            "422": INVALID,
          },
        },
      },
      "/admin/forecast": {
        get: {
          tags: ["admin"],
          operationId: "getForecast",
          summary: "The renewals due in the next days, their cost, and whether the balance covers them",
          description:
            "What the renewal sweep will buy: active licences paid a day or more beyond their term, RENEWAL_LEAD_DAYS before it ends (a licence paid " +
            "several terms ahead once per term). Costs at the reseller's prices: the reseller API publishes none, so they are the sandbox's in sandbox " +
            "mode and the catalogue's price_per_month times the renewal's months against a live reseller (null for a product without one). An alert is " +
            "raised while the balance will not cover the next 7 days.",
          security: ADMIN_SECURITY,
          parameters: queryParameters(forecastQuerySchema),
          responses: {
            "200": { description: "The forecast", ...json(ref("Forecast")) },
            "401": UNAUTHORIZED,
            "422": INVALID,
          },
        },
      },
      "/admin/jobs/{id}/retry": {
        post: {
          tags: ["admin"],
          operationId: "retryJob",
          summary: "Queue a failed or blocked job again, with fresh attempts",
          description: "No body needed.",
          security: ADMIN_SECURITY,
          parameters: [{ name: "id", in: "path", required: true, description: "The job id", schema: jsonSchema(jobIdSchema) }],
          responses: {
            "202": {
              description: "Queued again",
              ...json({ type: "object", properties: { job: ref("Job") }, required: ["job"], additionalProperties: false }),
            },
            "401": UNAUTHORIZED,
            "403": FORBIDDEN,
            "404": answer("Unknown job"),
            "409": answer("The job is neither failed nor blocked"),
            "422": INVALID,
          },
        },
      },
      "/admin/jobs/{id}/cancel": {
        post: {
          tags: ["admin"],
          operationId: "cancelJob",
          summary: "Cancel a failed or blocked job: it runs no more and no longer holds its service's later jobs back",
          description:
            "No body needed. A job that recorded a charge intent is refused (409): a charge may have happened at its provider, so retry it " +
            "(the re-run checks what the reseller holds before it buys) or reconcile. The service's history and the audit trail say who cancelled it.",
          security: ADMIN_SECURITY,
          parameters: [{ name: "id", in: "path", required: true, description: "The job id", schema: jsonSchema(jobIdSchema) }],
          responses: {
            "200": {
              description: "Cancelled",
              ...json({ type: "object", properties: { job: ref("Job") }, required: ["job"], additionalProperties: false }),
            },
            "401": UNAUTHORIZED,
            "403": FORBIDDEN,
            "404": answer("Unknown job"),
            "409": answer("The job is neither failed nor blocked, or it recorded a charge intent (the message says which)"),
            "422": INVALID,
          },
        },
      },
      "/admin/services/{id}/suspend": licenceAction("suspendService", "Suspend the service's licence"),
      "/admin/services/{id}/unsuspend": licenceAction("unsuspendService", "Unsuspend the service's licence"),
      "/admin/services/{id}/change-ip": licenceAction("changeServiceIp", "Move the service's licence to another IP", {
        requestBody: { required: true, ...json(jsonSchema(changeIpBodySchema)) },
      }),
      "/admin/services/{id}/resend-install-mail": serviceAction("resendInstallMail", "Send the install mail of an active licence again", {
        description:
          "Queues a fresh install-mail job (its own Message-ID), however often the order's mail went out; the job sends it after the answer.",
        ok: { status: "202", description: "Queued", schema: "QueuedMail" },
        requestBody: { required: false, ...json(jsonSchema(resendMailBodySchema)) },
        more: {
          "422": answer(
            "A wrong request_id or service id (code validation, `errors` names it); or the service is not active (service_not_active) or has no customer e-mail (no_customer_email)",
          ),
        },
      }),
      "/admin/services/{id}/reset-ip-changes": serviceAction("resetIpChanges", "Reset the licence's IP-change counter to 0", {
        description: "The product's max_ip_changes then allows as many changes as for a new licence. Written with a history entry naming the operator.",
        ok: { status: "200", description: "The licence, its counter reset", schema: "License" },
      }),
      "/admin/reconcile": {
        post: {
          tags: ["admin"],
          operationId: "reconcile",
          summary: "Compare the bridge's licences with each configured provider's licence list (the reseller's, Manage2's, CLN's)",
          description:
            'With `{"fix": true}` it repairs what needs no purchase; it never buys anything. Comparing needs the operator role, repairing the admin role; ' +
            "a repair writes an audit entry per service with the repair, and one for the run.",
          security: ADMIN_SECURITY,
          requestBody: { required: false, ...json(jsonSchema(reconcileBodySchema)) },
          responses: {
            "200": { description: "Drift found, and what was fixed", ...json(ref("ReconcileResult")) },
            "400": answer("Body is not JSON"),
            "401": UNAUTHORIZED,
            "403": FORBIDDEN,
            "409": answer("A reconcile is already running"),
            "415": answer("A body that is not application/json"),
            "422": INVALID,
            "502": answer("A provider's licence list could not be read (the error names it)"),
          },
        },
      },
      "/admin/adopt": {
        post: {
          tags: ["admin"],
          operationId: "adopt",
          summary: "Take over a running book: a panel's services against each configured provider's licence list",
          description:
            'Answers the plan, which is what apply does row by row. With `"apply": true` it writes the adoptions (status and expiry as the reseller holds them, ' +
            "suspended where the panel has the service suspended, its licences then suspended upstream by a queued job; nothing bought, no mail); a service suspended " +
            'in the panel is never bought; `"buy": true` also orders the missing licences through the job queue, `"mail": true` mails the customers. Rows: ' +
            Object.keys(adoptionRowSchema.shape).join(", ") +
            "; a wrong field is named as `services[<index>].<field>`.",
          security: ADMIN_SECURITY,
          requestBody: { required: true, ...json({ ...jsonSchema(adoptBodySchema), properties: { ...(jsonSchema(adoptBodySchema).properties as object), services: { type: "array", items: jsonSchema(adoptionRowSchema) } } }) },
          responses: {
            "200": { description: "The plan (after applying it, with apply)", ...json(ref("AdoptionPlan")) },
            "400": answer("Body is not JSON"),
            "401": UNAUTHORIZED,
            "409": answer("An adoption is already running"),
            "413": answer("Body larger than 64 MB"),
            "415": answer("A body that is not application/json"),
            "422": INVALID,
            "502": answer("A provider's licence list could not be read (the error names it)"),
          },
        },
      },
      "/healthz": {
        get: {
          tags: ["operations"],
          operationId: "health",
          summary: "Liveness: the process answers",
          responses: { "200": { description: "Alive", ...json(jsonSchema(z.object({ status: z.literal("ok") }), "output")) } },
        },
      },
      "/readyz": {
        get: {
          tags: ["operations"],
          operationId: "ready",
          summary: "Readiness: database writable, migrations current, upstream reachable",
          responses: {
            "200": { description: "Ready", ...json(jsonSchema(readySchema, "output")) },
            "503": { description: "Not ready, with a reason per failed check", ...json(jsonSchema(notReadySchema, "output")) },
          },
        },
      },
      "/metrics": {
        get: {
          tags: ["operations"],
          operationId: "metrics",
          summary: "Prometheus metrics, every name prefixed license_bridge_",
          responses: {
            "200": { description: "Prometheus text exposition format", content: { "text/plain; version=0.0.4": { schema: { type: "string" } } } },
          },
        },
      },
      "/openapi.json": {
        get: {
          tags: ["operations"],
          operationId: "openapi",
          summary: "This document",
          responses: { "200": { description: "OpenAPI 3.1", content: { "application/json": { schema: { type: "object" } } } } },
        },
      },
    }),
    components: {
      securitySchemes: {
        adminToken: { type: "http", scheme: "bearer", description: "ADMIN_TOKEN (the admin named admin), or an operator's token (OPERATORS_FILE; its role decides what it may do)" },
        provisioningToken: { type: "http", scheme: "bearer", description: "PROVISIONING_TOKEN" },
      },
      schemas: {
        BillingEvent: jsonSchema(billingEventSchema, "input"),
        WebhookAnswer: jsonSchema(webhookAnswerSchema, "output"),
        Error: jsonSchema(errorSchema, "output"),
        ValidationError: jsonSchema(validationErrorSchema, "output"),
        License: jsonSchema(licenseSchema, "output"),
        ServiceDetail: jsonSchema(serviceDetailSchema, "output"),
        HistoryItem: jsonSchema(historyItemSchema, "output"),
        Queue: jsonSchema(queueSchema, "output"),
        Job: jsonSchema(jobSchema, "output"),
        Modules: jsonSchema(modulesSchema, "output"),
        Balance: jsonSchema(balanceSchema, "output"),
        AuditPage: jsonSchema(auditPageSchema, "output"),
        Forecast: jsonSchema(forecastSchema, "output"),
        ReconcileResult: jsonSchema(reconcileResultSchema, "output"),
        AdoptionPlan: jsonSchema(adoptionPlanSchema, "output"),
        LicenceAction: jsonSchema(licenceActionSchema, "output"),
        QueuedMail: jsonSchema(queuedMailSchema, "output"),
        ProvisionedLicense: jsonSchema(provisionedLicenseSchema, "output"),
        ProvisionPending: jsonSchema(provisionPendingSchema, "output"),
        ProvisionError: jsonSchema(provisionErrorSchema, "output"),
      },
    },
  };
}

/** `GET /openapi.json`, no auth. The document is built once. */
/**
 * The native panel adapters (mounted only when their secret or token is configured). Their
 * bodies are the panels' own formats, translated into BillingEvent; answers are the webhook's.
 */
function adapterPaths(): Record<string, unknown> {
  const common = {
    "200": answer('Duplicate delivery, or an event the bridge does not act on ({"status":"ignored","reason"})'),
    "202": answer("Accepted: every event it became stored durably and queued"),
    "400": answer("Body is not JSON"),
    "401": answer("Bad or missing signature or token, or a stale timestamp"),
    "409": answer('"unknown service"; or (HostBill, code conflict) a copy of an accepted delivery whose HB-Event, which the signature does not cover, names another event'),
    "413": answer(`Body over ${MAX_WEBHOOK_BYTES / 1024} KiB`),
    "415": answer("Content-Type is not application/json"),
    "422": answer("The translated event breaks the schema or a business rule", "ValidationError"),
    "503": answer(UNAVAILABLE),
  };
  const own = { type: "object", description: "the panel's own payload" };
  const op = (operationId: string, summary: string, extra: Record<string, unknown> = {}, forms = false) => ({
    post: {
      tags: ["webhooks"],
      operationId,
      summary,
      requestBody: {
        required: true,
        content: { "application/json": { schema: own }, ...(forms ? { "application/x-www-form-urlencoded": { schema: own } } : {}) },
      },
      responses: common,
      ...extra,
    },
  });
  return {
    "/webhooks/hostbill": op(
      "receiveHostBillEvent",
      "HostBill WebHooks plugin (HB-Signature: hex HMAC-SHA256 of HB-Timestamp + body; the hook in HB-Event)",
      {
        parameters: [
          { name: "HB-Signature", in: "header", required: true, schema: { type: "string" } },
          { name: "HB-Timestamp", in: "header", required: true, schema: { type: "string" } },
          {
            name: "HB-Event",
            in: "header",
            required: true,
            schema: { type: "string" },
            description: "e.g. after_accountcreate. Not signed: the dedupe key comes from HB-Timestamp and the body alone, and an event the body names wins",
          },
        ],
      },
      true,
    ),
    "/webhooks/upmind": op("receiveUpmindEvent", "Upmind contract-product hooks (X-Webhook-Signature: HMAC-SHA256 of the body)", {
      parameters: [{ name: "X-Webhook-Signature", in: "header", required: true, schema: { type: "string" } }],
    }),
    "/webhooks/blesta/{token}": op(
      "receiveBlestaEvent",
      "Blesta Webhooks plugin (the URL's token, optional IP allow-list; the event in X-Blesta-Event or ?event=)",
      {
        parameters: [
          { name: "token", in: "path", required: true, description: "BLESTA_WEBHOOK_TOKEN", schema: { type: "string" } },
          { name: "X-Blesta-Event", in: "header", required: false, schema: { type: "string" }, description: "e.g. Services.editAfter (plugin 1.2.1+)" },
          { name: "event", in: "query", required: false, schema: { type: "string" }, description: "the event, for plugins that send no X-Blesta-Event" },
        ],
        responses: { ...common, "403": answer("The sender's IP is not in BLESTA_ALLOWED_IPS") },
      },
      true,
    ),
  };
}

/**
 * The provisioning API: every call takes GET (query string) or POST (form or JSON body), waits up
 * to PROVISION_WAIT_SECONDS for its work, and answers with the licence.
 */
function provisioningPaths(): Record<string, unknown> {
  const PARAMS: Record<(typeof PROVISIONING_CALLS)[number], [z.ZodType, string]> = {
    create: [createParams, "Order the licence (as service.created): buys it, then mails the install command when customer_email is given"],
    suspend: [targetParams, "Suspend the licence (as service.suspended)"],
    unsuspend: [targetParams, "Unsuspend the licence (as service.unsuspended)"],
    terminate: [targetParams, "Terminate: suspend, never renew again (as service.terminated)"],
    renew: [
      renewParams,
      "The customer paid another cycle, up to next_due_date when given (as service.renewed). Without next_due_date, the same call made again while that renewal is under way or within a day after it answers its outcome and adds no cycle",
    ],
    "change-ip": [changeIpParams, "Move the licence to new_ip, within the product's max_ip_changes (as service.ip_changed)"],
    "change-package": [changePackageParams, "A LiteSpeed core change to package_identifier's variant (as service.product_changed)"],
    info: [targetParams, "The licence, for a panel's client area; changes nothing"],
  };
  const pr = (description: string, schemaName = "ProvisionError") => ({ description, ...json(ref(schemaName)) });
  const responses = {
    "200": pr("Done (or nothing to do): the licence", "ProvisionedLicense"),
    "202": pr(
      "Not done within PROVISION_WAIT_SECONDS, or queued behind a blocked job of the service (the message names it); the work goes on, and the same call made again later answers with its outcome",
      "ProvisionPending",
    ),
    "400": pr("The body is not valid JSON"),
    "401": pr("No or wrong `Authorization: Bearer <PROVISIONING_TOKEN>`"),
    "404": pr("Unknown license_key / service_identifier (code unknown_service)"),
    "409": pr("Not now (code retry_later): the same call made again later will be taken"),
    "413": pr("Parameters over 64 KiB"),
    "415": pr("A body that is neither a form nor JSON"),
    "422": pr("A wrong parameter, named in `errors` (codes validation, ip_in_use, ip_unusable, ip_change_limit, service_terminated)"),
    "502": pr("The call's own work was refused upstream or needs the operator: its job is blocked or failed (codes insufficient_balance, upstream_unauthorized, upstream_refused, ...)"),
    "503": pr(
      `${UNAVAILABLE}; or, for a call made with on_pending=error, not done within PROVISION_WAIT_SECONDS (code pending, Retry-After): the work goes on, and the same call made again later answers with its outcome`,
    ),
  };
  const onPending = {
    name: "on_pending",
    in: "query",
    required: false,
    description:
      '"202" (default): a call still at work after PROVISION_WAIT_SECONDS answers 202 pending. "error": it answers 503 (code pending, Retry-After) instead, for callers that take any 2xx carrying a license_key as done (Upmind\'s Generic provider)',
    schema: { type: "string", enum: ["202", "error"] },
  };
  const paths: Record<string, unknown> = {};
  for (const call of PROVISIONING_CALLS) {
    const [schema, summary] = PARAMS[call];
    const body = jsonSchema(schema);
    const base = { tags: ["provisioning"], summary, security: [{ provisioningToken: [] }], responses };
    paths[`/provision/v1/${call}`] = {
      post: {
        ...base,
        operationId: `provision_${call.replace("-", "_")}`,
        parameters: [onPending],
        requestBody: { required: true, content: { "application/x-www-form-urlencoded": { schema: body }, "application/json": { schema: body } } },
      },
      get: { ...base, operationId: `provision_${call.replace("-", "_")}_get`, parameters: [...queryParameters(schema), onPending] },
    };
  }
  return paths;
}

export function openApiRouter(): Router {
  const router = express.Router();
  const doc = openApiDocument();
  router.get("/openapi.json", (_req, res) => {
    res.json(doc);
  });
  return router;
}
