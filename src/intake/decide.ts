import type { Catalog } from "../catalog/catalog.js";
import { jobOf } from "../jobs/define.js";
import type { IntakeDecision, IntakeView, NewService, ServicePatch, ServiceRow } from "../store/store.js";
import type { ErrorCode } from "../vocabulary/error-codes.js";
import { JOB_KINDS, serviceQueueKey } from "../vocabulary/job-kinds.js";
import type { Job } from "../vocabulary/jobs.js";
import type { BillingEvent, FieldErrors } from "./event-schema.js";
import { CHANGE_IP, CHANGE_PRODUCT, RECORD_PAYMENT, REGISTER, SUSPEND, TERMINATE, UNSUSPEND } from "./jobs.js";
import { project } from "./projection.js";
import { businessErrors } from "./rules.js";

/**
 * What the bridge makes of one event, whichever way it came in (a signed webhook, a panel
 * adapter, the provisioning API, the CLI): one function, so every way in gets the same answer.
 *
 * - `accepted`: stored, with the job that carries it out (`jobId`); or stored with nothing to do
 *   (`nothingToDo` says why: already so, or about to be), and `answerFor` names the job already
 *   under way whose outcome is this event's too (a second suspend while the first is queued).
 * - `unknown_service`, `invalid`: refused, nothing stored.
 */
export type Verdict =
  | { status: "accepted"; nothingToDo?: string; answerFor?: number }
  | { status: "unknown_service" }
  | { status: "invalid"; errors: FieldErrors; code: ErrorCode };

export interface DecideDeps {
  catalog: Catalog;
  /** ALLOW_PRIVATE_IPS. */
  allowPrivateIps: boolean;
}

export interface DecideOptions {
  /** false: an order's registration sends no install mail (adoption's purchases, unless asked). (Default: true) */
  mail?: boolean;
}

const queued = (serviceId: string) => ({ serviceId, queueKey: serviceQueueKey(serviceId) });

/** Stored, with its job (or with none and why). */
function accepted(event: BillingEvent, extra: Omit<Extract<IntakeDecision<Verdict>, { write: true }>, "write" | "result" | "event"> & { nothingToDo?: string; answerFor?: Job }): IntakeDecision<Verdict> {
  const { nothingToDo, answerFor, ...write } = extra;
  return {
    write: true,
    result: { status: "accepted", ...(nothingToDo ? { nothingToDo } : {}), ...(answerFor ? { answerFor: answerFor.id } : {}) },
    event: { type: event.type, serviceId: event.service.id, payload: JSON.stringify(event), outcome: nothingToDo ? "ignored" : null, detail: nothingToDo ?? null },
    ...write,
  };
}

/**
 * Decides one event against the stored service and the jobs already accepted for it (`view`,
 * read inside the intake's transaction). Pure: table-tested in test/intake/decide.test.ts.
 */
export function decide(event: BillingEvent, view: IntakeView, deps: DecideDeps, options: DecideOptions = {}): IntakeDecision<Verdict> {
  const { existing, unfinished } = view;
  if (event.type !== "service.created" && !existing) return { write: false, result: { status: "unknown_service" } };
  const projection = existing ? project(existing, unfinished) : undefined;
  const verdict = businessErrors(event, existing, projection, { ...deps, holdersOf: () => view.holders });
  if (verdict.errors) return { write: false, result: { status: "invalid", errors: verdict.errors, code: verdict.code ?? "validation" } };

  const serviceId = event.service.id;
  /** The latest unfinished job of `kind`: what an earlier identical event queued, still under way. */
  const underWay = (kind: string) => unfinished.findLast((j) => j.kind === kind);

  switch (event.type) {
    case "service.created": {
      const quiet = options.mail === false ? { mail: false as const } : {};
      if (!existing || existing.status === "failed") return accepted(event, { order: orderOf(deps.catalog, event, existing), job: jobOf(REGISTER, { ...quiet }, queued(serviceId)) });
      // Ordered again while its termination is still queued: the termination must run on the row
      // as it is, so the order's row goes with its job and is written once the termination is done.
      if (projection!.terminating) {
        return accepted(event, { job: jobOf(REGISTER, { reactivate: true, order: orderOf(deps.catalog, event, existing).update!, ...quiet }, queued(serviceId)) });
      }
      // Terminated (and done): unsuspend its licence, or register it if gone upstream.
      if (projection!.terminated) return accepted(event, { order: orderOf(deps.catalog, event, existing), job: jobOf(REGISTER, { reactivate: true, ...quiet }, queued(serviceId)) });
      return accepted(event, { nothingToDo: `service already known (status ${existing.status}); nothing bought, no mail sent`, answerFor: underWay(JOB_KINDS.register) });
    }
    case "service.renewed":
      return accepted(event, { job: jobOf(RECORD_PAYMENT, { next_due_date: event.service.next_due_date ?? null }, queued(serviceId)) });
    case "service.suspended":
    case "service.unsuspended": {
      const to = event.type === "service.suspended" ? "suspended" : "active";
      const kind = event.type === "service.suspended" ? JOB_KINDS.suspend : JOB_KINDS.unsuspend;
      // Already so, or on its way there: nothing to queue (a job queued behind a blocked one would
      // make a repeat wait for that). Not while a purchase is queued: it may yet fail.
      if (projection!.status === to && !purchaseQueued(unfinished)) return accepted(event, { nothingToDo: `the service is ${to === "active" ? "active" : "suspended"} already`, answerFor: underWay(kind) });
      return accepted(event, { job: jobOf(event.type === "service.suspended" ? SUSPEND : UNSUSPEND, {}, queued(serviceId)) });
    }
    case "service.terminated":
      if (projection!.terminated) return accepted(event, { nothingToDo: "the service is already terminated", answerFor: underWay(JOB_KINDS.terminate) });
      return accepted(event, { job: jobOf(TERMINATE, {}, queued(serviceId)) });
    case "service.ip_changed": {
      const to = event.changes!.ip!;
      // At that IP already, or about to be: nothing to change, and no IP change counted.
      if (to === projection!.ip) return accepted(event, { nothingToDo: `the licence is at ${to} already`, answerFor: underWay(JOB_KINDS.changeIp) });
      return accepted(event, { patch: { ip_changes: existing!.ip_changes + 1 }, job: jobOf(CHANGE_IP, { ip: to }, queued(serviceId)) });
    }
    case "service.product_changed": {
      const to = event.changes!.product_id!;
      const pending = underWay(JOB_KINDS.changeProduct);
      if (to === existing!.product_id && !pending) return accepted(event, { nothingToDo: `the service has product ${to} already` });
      return accepted(event, { job: jobOf(CHANGE_PRODUCT, { product_id: to }, queued(serviceId)) });
    }
  }
}

/** A first purchase is queued (not a reactivation): until it is done, the service's status is not settled. */
function purchaseQueued(unfinished: readonly Job[]): boolean {
  return unfinished.some((j) => j.kind === JOB_KINDS.register && (j.payload as { reactivate?: unknown } | null)?.reactivate !== true);
}

/** The service row an order describes: new, or a failed or terminated service ordered again. */
export function orderOf(catalog: Catalog, event: BillingEvent, existing: ServiceRow | undefined): { insert?: NewService; update?: ServicePatch } {
  const product = catalog.product(event.service.product_id!)!;
  const ip = event.service.ip!;
  const row = {
    product_id: product.productId,
    kind: product.kind,
    type: product.kind === "licence" ? product.type : null,
    bundle: product.kind === "bundle" ? product.bundle : null,
    variant: product.kind === "licence" ? product.variant : null,
    // Who sells it and what they sell (the reseller's is its type or bundle, above).
    provider: product.provider,
    sku: product.provider === "reseller" ? null : product.purchase.sku,
    ip,
    billing_cycle: event.service.billing_cycle!,
    months: catalog.months(event.service.billing_cycle!),
    status: "pending" as const,
    customer_email: event.service.customer?.email ?? null,
    customer_name: event.service.customer?.name ?? null,
    paid_until: event.service.next_due_date ? Date.parse(event.service.next_due_date) : null,
    // The store sets it to the event's id.
    order_event_id: null,
  };
  if (!existing) return { insert: { service_id: event.service.id, ...row } };
  // Ordered again: what upstream has is looked up afresh unless it is the same licence (IP and product).
  const sameLicense = existing.ip === ip && existing.type === row.type && existing.bundle === row.bundle && existing.provider === row.provider && existing.sku === row.sku;
  const update: ServicePatch = {
    ...row,
    last_error: null,
    ...(sameLicense ? {} : { upstream_variant: null, bundle_key: null, expires_at: null, companions: "[]", upstream_id: null }),
  };
  return { update };
}
