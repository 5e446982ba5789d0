import type { Catalog } from "../catalog/catalog.js";
import type { ErrorCode } from "../vocabulary/error-codes.js";
import { jobOf } from "../jobs/define.js";
import { serviceQueueKey } from "../vocabulary/job-kinds.js";
import type { IntakeDecision, IntakeView, NewJob, ServicePatch, Store } from "../store/store.js";
import type { BillingEvent, FieldErrors } from "./event-schema.js";
import { project, type Projection } from "./projection.js";
import { businessErrors } from "./rules.js";
import { CHANGE_IP, CHANGE_PRODUCT, RECORD_PAYMENT, REGISTER, SUSPEND, TERMINATE, UNSUSPEND } from "./jobs.js";

export type IntakeResult =
  /** `jobId`: the job the event queued, when it needs work. */
  | { status: "accepted"; eventId: string; jobId?: number }
  /** `type`: the stored event's, which a source whose type rests on an unsigned input compares with its own. */
  | { status: "duplicate"; eventId: string; type: string }
  | { status: "unknown_service" }
  | { status: "invalid"; errors: FieldErrors; code: ErrorCode }
  /** Not stored, but the same event sent again later will be (e.g. a termination still being applied). */
  | { status: "retry_later"; reason: string };

export interface IntakeItem {
  webhookId: string;
  event: BillingEvent;
}

export interface IntakeDeps {
  store: Store;
  catalog: Catalog;
  /** ALLOW_PRIVATE_IPS. (Default: false) */
  allowPrivateIps?: boolean;
}

/**
 * Several events of one delivery (a panel's "service edited" hook may mean a renewal and an IP
 * change): all are stored, or none is.
 */
export type Intake = (source: string, items: readonly IntakeItem[]) => Promise<IntakeResult[]>;

type Judged = { status: "accepted" } | Exclude<IntakeResult, { status: "accepted" | "duplicate" }>;

/**
 * The one path every panel's event takes into the bridge: deduplicate on (source, webhook id),
 * check the rules that need stored state, and commit the event with its job in one transaction
 * that is fsynced before the answer, so an acknowledged event is never lost and a repeated one
 * creates nothing.
 */
export function createIntake(deps: IntakeDeps): Intake {
  const { store, catalog } = deps;
  const rules = { catalog, allowPrivateIps: deps.allowPrivateIps ?? false };

  const decide = (item: IntakeItem, view: IntakeView): IntakeDecision<Judged> => {
    const { event } = item;
    const { existing } = view;
    if (event.type !== "service.created" && !existing) return { write: false, result: { status: "unknown_service" } };
    const projection = existing ? project(existing, view.unfinished) : undefined;
    const verdict = businessErrors(event, existing, projection, { ...rules, holdersOf: () => view.holders });
    if (verdict.errors) return { write: false, result: { status: "invalid", errors: verdict.errors, code: verdict.code ?? "validation" } };

    const plan = planFor(event, existing !== undefined && existing.status, projection);
    const serviceId = event.service.id;
    // Ordered again while its termination is still queued: the termination must run on the row
    // as it is, so the order's row goes with its job and is written once the termination is done.
    if (plan.order && projection?.terminating) {
      const update = orderOf(event, existing).update!;
      return {
        write: true,
        result: { status: "accepted" },
        event: { type: event.type, serviceId, payload: JSON.stringify(event), outcome: null, detail: null },
        job: jobOf(REGISTER, { reactivate: true, order: update }, { serviceId, queueKey: serviceQueueKey(serviceId) }),
      };
    }
    return {
      write: true,
      result: { status: "accepted" },
      event: { type: event.type, serviceId, payload: JSON.stringify(event), outcome: plan.ignored ? "ignored" : null, detail: plan.ignored ?? null },
      ...(plan.order ? { order: orderOf(event, existing) } : {}),
      ...(event.type === "service.ip_changed" ? { patch: { ip_changes: existing!.ip_changes + 1 } } : {}),
      ...(plan.job ? { job: plan.job(serviceId) } : {}),
    };
  };

  /** The service row this order describes: new, or a failed or terminated service ordered again. */
  const orderOf = (event: BillingEvent, existing: IntakeView["existing"]): NonNullable<Extract<IntakeDecision<Judged>, { write: true }>["order"]> => {
    const product = catalog.product(event.service.product_id!)!;
    const ip = event.service.ip!;
    const row = {
      product_id: product.productId,
      kind: product.kind,
      type: product.kind === "licence" ? product.type : null,
      bundle: product.kind === "bundle" ? product.bundle : null,
      variant: product.kind === "licence" ? product.variant : null,
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
    const sameLicence = existing.ip === ip && existing.type === row.type && existing.bundle === row.bundle;
    const update: ServicePatch = { ...row, last_error: null, ...(sameLicence ? {} : { upstream_variant: null, bundle_key: null, expires_at: null, companions: "[]" }) };
    return { update };
  };

  return async (source, items) => {
    const accepted = await store.events.accept(
      source,
      items.map((item) => ({
        ...item,
        queueKey: serviceQueueKey(item.event.service.id),
        ip: item.event.type === "service.created" ? item.event.service.ip : item.event.type === "service.ip_changed" ? item.event.changes?.ip : undefined,
      })),
      decide,
      // One delivery's events are stored together or not at all (a refused IP change must not leave its renewal behind).
      (results) => items.length < 2 || !results.some((r) => "result" in r && (r.result.status === "invalid" || r.result.status === "retry_later")),
    );
    const storedType = async (eventId: string) => (await store.events.get(eventId))!.type;
    const results = accepted.items.map(async (r): Promise<IntakeResult> => {
      if ("duplicate" in r) return { status: "duplicate", eventId: r.duplicate, type: await storedType(r.duplicate) };
      if (!accepted.stored && r.result.status === "accepted") return { status: "retry_later", reason: "not stored: another event of the same delivery was refused" };
      if (r.result.status === "accepted") return { status: "accepted", eventId: r.eventId!, ...(r.jobId === undefined ? {} : { jobId: r.jobId }) };
      return r.result;
    });
    return Promise.all(results);
  };
}

interface Plan {
  job?: (serviceId: string) => NewJob;
  /** The service row is (re)written from this order. */
  order?: boolean;
  /** Why the event needs no work; it is still recorded. */
  ignored?: string;
}

function planFor(event: BillingEvent, status: false | string, projection: Projection | undefined): Plan {
  const queued = (serviceId: string) => ({ serviceId, queueKey: serviceQueueKey(serviceId) });
  switch (event.type) {
    case "service.created":
      if (status === false || status === "failed") return { job: (id) => jobOf(REGISTER, {}, queued(id)), order: true };
      // Terminated (rules only let a finished termination through): unsuspend, or register if gone upstream.
      if (projection?.terminated) return { job: (id) => jobOf(REGISTER, { reactivate: true }, queued(id)), order: true };
      return { ignored: `service already known (status ${status}); nothing bought, no mail sent` };
    case "service.renewed":
      return { job: (id) => jobOf(RECORD_PAYMENT, { next_due_date: event.service.next_due_date ?? null }, queued(id)) };
    case "service.suspended":
      return { job: (id) => jobOf(SUSPEND, {}, queued(id)) };
    case "service.unsuspended":
      return { job: (id) => jobOf(UNSUSPEND, {}, queued(id)) };
    case "service.terminated":
      if (projection?.terminated) return { ignored: "the service is already terminated" };
      return { job: (id) => jobOf(TERMINATE, {}, queued(id)) };
    case "service.ip_changed":
      return { job: (id) => jobOf(CHANGE_IP, { ip: event.changes!.ip! }, queued(id)) };
    case "service.product_changed":
      return { job: (id) => jobOf(CHANGE_PRODUCT, { product_id: event.changes!.product_id! }, queued(id)) };
  }
}
