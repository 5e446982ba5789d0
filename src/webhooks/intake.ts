import { randomUUID } from "node:crypto";
import type { Catalog } from "../catalog/catalog.js";
import type { ErrorCode } from "../http/error-codes.js";
import type { Clock } from "../jobs/clock.js";
import type { JobQueue } from "../jobs/queue.js";
import { JOB_KINDS, serviceQueueKey } from "../lifecycle/job-kinds.js";
import type { Db } from "../store/database.js";
import type { ServiceRow, ServiceStore } from "../store/services.js";
import type { BillingEvent, FieldErrors } from "./event-schema.js";
import { businessErrors, project, type Projection } from "./rules.js";

export type IntakeResult =
  /** `jobId`: the job the event queued, when it needs work. */
  | { status: "accepted"; eventId: string; jobId?: number }
  | { status: "duplicate"; eventId: string }
  | { status: "unknown_service" }
  | { status: "invalid"; errors: FieldErrors; code: ErrorCode }
  /** Not stored, but the same event sent again later will be (e.g. a termination still being applied). */
  | { status: "retry_later"; reason: string };

export interface IntakeItem {
  webhookId: string;
  event: BillingEvent;
}

export interface IntakeDeps {
  db: Db;
  queue: JobQueue;
  services: ServiceStore;
  catalog: Catalog;
  clock: Clock;
  /** ALLOW_PRIVATE_IPS. (Default: false) */
  allowPrivateIps?: boolean;
}

/**
 * Several events of one delivery (a panel's "service edited" hook may mean a renewal and an IP
 * change): all are stored, or none is. `results` holds each one's outcome; when a rule refused
 * one of them, the others are `{status: "invalid", errors: {}}`-free `not_stored` entries.
 */
export type Intake = (source: string, items: readonly IntakeItem[]) => IntakeResult[];

/** Time-ordered and unique; randomUUID draws from a cached entropy pool, randomBytes would not. */
export function newEventId(nowMs: number): string {
  return `evt_${nowMs.toString(36)}${randomUUID().slice(0, 13).replace("-", "")}`;
}

/** Thrown inside the transaction to undo a delivery that a rule refused in part. */
class RolledBack extends Error {
  constructor(readonly results: IntakeResult[]) {
    super("rolled back");
  }
}

/**
 * The one path every panel's event takes into the bridge: deduplicate on (source, webhook id),
 * check the rules that need stored state, and commit the event with its job in one immediate
 * transaction, so an acknowledged event is never lost and a repeated one creates nothing.
 * Run it inside the group commit's transaction (it opens a savepoint of its own there).
 */
export function createIntake(deps: IntakeDeps): Intake {
  const { db, queue, services, catalog, clock } = deps;
  const findEvent = db.prepare("SELECT id FROM events WHERE source = ? AND webhook_id = ?");
  const insertEvent = db.prepare(
    `INSERT INTO events (id, source, webhook_id, type, service_id, payload, received_at, outcome, detail)
     VALUES (@id, @source, @webhook_id, @type, @service_id, @payload, @received_at, @outcome, @detail)`,
  );
  const rules = { catalog, allowPrivateIps: deps.allowPrivateIps ?? false, holdersOf: (ip: string, except: string) => services.holdersOf(ip, except) };

  const acceptOne = (source: string, webhookId: string, event: BillingEvent): IntakeResult => {
    const dup = findEvent.get(source, webhookId) as { id: string } | undefined;
    if (dup) return { status: "duplicate", eventId: dup.id };

    const serviceId = event.service.id;
    const existing = services.get(serviceId);
    if (event.type !== "service.created" && !existing) return { status: "unknown_service" };
    const projection = existing ? project(existing, queue.unfinished(serviceQueueKey(serviceId))) : undefined;

    const verdict = businessErrors(event, existing, projection, rules);
    if (verdict.retryLater) return { status: "retry_later", reason: verdict.retryLater };
    if (verdict.errors) return { status: "invalid", errors: verdict.errors, code: verdict.code ?? "validation" };

    const now = clock.now();
    const eventId = newEventId(now);
    const plan = planFor(event, existing, projection);
    insertEvent.run({
      id: eventId,
      source,
      webhook_id: webhookId,
      type: event.type,
      service_id: serviceId,
      payload: JSON.stringify(event),
      received_at: now,
      outcome: plan.ignored ? "ignored" : null,
      detail: plan.ignored ?? null,
    });
    if (plan.order) recordOrder(event, existing, eventId, now);
    if (event.type === "service.ip_changed") {
      services.update(serviceId, { ip_changes: existing!.ip_changes + 1 }, now);
    }
    if (!plan.job) return { status: "accepted", eventId };
    const { id: jobId } = queue.enqueue({ kind: plan.job, queueKey: serviceQueueKey(serviceId), serviceId, eventId, payload: plan.payload ?? {} });
    return { status: "accepted", eventId, jobId };
  };

  /** The service row as this order describes it: new, or a failed or terminated service ordered again. */
  const recordOrder = (event: BillingEvent, existing: ServiceRow | undefined, eventId: string, now: number) => {
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
      order_event_id: eventId,
    };
    if (!existing) return services.insert({ service_id: event.service.id, ...row }, now);
    // Ordered again: what upstream has is looked up afresh unless it is the same licence (IP and product).
    const sameLicence = existing.ip === ip && existing.type === row.type && existing.bundle === row.bundle;
    services.update(
      event.service.id,
      {
        ...row,
        last_error: null,
        ...(sameLicence ? {} : { upstream_variant: null, bundle_key: null, expires_at: null, companions: "[]" }),
      },
      now,
    );
  };

  const accept = db.transaction((source: string, items: readonly IntakeItem[]): IntakeResult[] => {
    const results = items.map((item) => acceptOne(source, item.webhookId, item.event));
    if (items.length > 1 && results.some((r) => r.status === "invalid" || r.status === "retry_later")) throw new RolledBack(results);
    return results;
  });

  return (source, items) => {
    try {
      return accept(source, items);
    } catch (err) {
      if (!(err instanceof RolledBack)) throw err;
      return err.results.map((r) => (r.status === "accepted" ? { status: "retry_later", reason: "not stored: another event of the same delivery was refused" } : r));
    }
  };
}

interface Plan {
  job?: string;
  payload?: unknown;
  /** The service row is (re)written from this order. */
  order?: boolean;
  /** Why the event needs no work; it is still recorded. */
  ignored?: string;
}

function planFor(event: BillingEvent, existing: ServiceRow | undefined, projection: Projection | undefined): Plan {
  switch (event.type) {
    case "service.created":
      if (!existing || existing.status === "failed") return { job: JOB_KINDS.register, order: true };
      // Terminated (rules only let a finished termination through): unsuspend, or register if gone upstream.
      if (projection?.terminated) return { job: JOB_KINDS.register, order: true, payload: { reactivate: true } };
      return { ignored: `service already known (status ${existing.status}); nothing bought, no mail sent` };
    case "service.renewed":
      return { job: JOB_KINDS.recordPayment, payload: { next_due_date: event.service.next_due_date ?? null } };
    case "service.suspended":
      return { job: JOB_KINDS.suspend };
    case "service.unsuspended":
      return { job: JOB_KINDS.unsuspend };
    case "service.terminated":
      if (projection?.terminated) return { ignored: "the service is already terminated" };
      return { job: JOB_KINDS.terminate };
    case "service.ip_changed":
      return { job: JOB_KINDS.changeIp, payload: { ip: event.changes!.ip! } };
    case "service.product_changed":
      return { job: JOB_KINDS.changeProduct, payload: { product_id: event.changes!.product_id! } };
  }
}
