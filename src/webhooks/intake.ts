import { randomUUID } from "node:crypto";
import type { Catalog } from "../catalog/catalog.js";
import type { Clock } from "../jobs/clock.js";
import type { JobQueue } from "../jobs/queue.js";
import { JOB_KINDS, serviceQueueKey } from "../lifecycle/job-kinds.js";
import { sameIp } from "../lifecycle/upstream.js";
import type { Db } from "../store/database.js";
import type { ServiceRow, ServiceStore } from "../store/services.js";
import type { BillingEvent, FieldErrors } from "./event-schema.js";

export type IntakeResult =
  | { status: "accepted"; eventId: string }
  | { status: "duplicate"; eventId: string }
  | { status: "unknown_service" }
  | { status: "invalid"; errors: FieldErrors };

export interface IntakeDeps {
  db: Db;
  queue: JobQueue;
  services: ServiceStore;
  catalog: Catalog;
  clock: Clock;
}

/** Time-ordered and unique; randomUUID draws from a cached entropy pool, randomBytes would not. */
export function newEventId(nowMs: number): string {
  return `evt_${nowMs.toString(36)}${randomUUID().slice(0, 13).replace("-", "")}`;
}

/**
 * The one path every panel's event takes into the bridge: deduplicate on (source, webhook id),
 * check the rules that need stored state, and commit the event with its job in one immediate
 * transaction, so an acknowledged event is never lost and a repeated one creates nothing.
 */
export function createIntake(deps: IntakeDeps): (source: string, webhookId: string, event: BillingEvent) => IntakeResult {
  const { db, queue, services, catalog, clock } = deps;
  const findEvent = db.prepare("SELECT id FROM events WHERE source = ? AND webhook_id = ?");
  const insertEvent = db.prepare(
    `INSERT INTO events (id, source, webhook_id, type, service_id, payload, received_at, outcome, detail)
     VALUES (@id, @source, @webhook_id, @type, @service_id, @payload, @received_at, @outcome, @detail)`,
  );

  const accept = db.transaction((source: string, webhookId: string, event: BillingEvent): IntakeResult => {
    const dup = findEvent.get(source, webhookId) as { id: string } | undefined;
    if (dup) return { status: "duplicate", eventId: dup.id };

    const serviceId = event.service.id;
    const existing = services.get(serviceId);
    if (event.type !== "service.created" && !existing) return { status: "unknown_service" };

    const errors = businessErrors(event, existing, catalog);
    if (errors) return { status: "invalid", errors };

    const now = clock.now();
    const eventId = newEventId(now);
    const plan = planFor(event, existing);
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

    if (event.type === "service.created" && (!existing || existing.status === "failed")) {
      const product = catalog.product(event.service.product_id!)!;
      const row = {
        product_id: product.productId,
        kind: product.kind,
        type: product.kind === "licence" ? product.type : null,
        bundle: product.kind === "bundle" ? product.bundle : null,
        variant: product.kind === "licence" ? product.variant : null,
        ip: event.service.ip!,
        billing_cycle: event.service.billing_cycle!,
        months: catalog.months(event.service.billing_cycle!),
        status: "pending" as const,
        customer_email: event.service.customer?.email ?? null,
        customer_name: event.service.customer?.name ?? null,
        paid_until: event.service.next_due_date ? Date.parse(event.service.next_due_date) : null,
      };
      // A panel re-sending the order of a service whose registration failed for good: try again with what it says now.
      if (existing) services.update(serviceId, { ...row, last_error: null }, now);
      else services.insert({ service_id: serviceId, ...row }, now);
    }
    if (event.type === "service.ip_changed") {
      services.update(serviceId, { ip_changes: existing!.ip_changes + 1 }, now);
    }
    if (plan.job) {
      queue.enqueue({
        kind: plan.job,
        queueKey: serviceQueueKey(serviceId),
        serviceId,
        eventId,
        payload: plan.payload ?? {},
      });
    }
    return { status: "accepted", eventId };
  });

  return (source, webhookId, event) => accept.immediate(source, webhookId, event);
}

interface Plan {
  job?: string;
  payload?: unknown;
  /** Why the event needs no work; it is still recorded. */
  ignored?: string;
}

function planFor(event: BillingEvent, existing: ServiceRow | undefined): Plan {
  switch (event.type) {
    case "service.created":
      if (!existing || existing.status === "failed") return { job: JOB_KINDS.register };
      return { ignored: `service already known (status ${existing.status}); nothing bought, no mail sent` };
    case "service.renewed":
      return {
        job: JOB_KINDS.recordPayment,
        payload: { next_due_date: event.service.next_due_date ?? null },
      };
    case "service.suspended":
      return { job: JOB_KINDS.suspend };
    case "service.unsuspended":
      return { job: JOB_KINDS.unsuspend };
    case "service.terminated":
      return { job: JOB_KINDS.terminate };
    case "service.ip_changed":
      return { job: JOB_KINDS.changeIp, payload: { ip: event.changes!.ip! } };
    case "service.product_changed":
      return { job: JOB_KINDS.changeProduct, payload: { product_id: event.changes!.product_id! } };
  }
}

/** Rules that need the catalogue or the stored service; undefined when the event passes. */
function businessErrors(event: BillingEvent, existing: ServiceRow | undefined, catalog: Catalog): FieldErrors | undefined {
  const errors: FieldErrors = {};
  const add = (path: string, message: string) => (errors[path] ??= []).push(message);

  if (event.service.product_id !== undefined && !catalog.product(event.service.product_id)) {
    // On later events a panel may send a product we no longer sell; only creation needs it mapped.
    if (event.type === "service.created") add("service.product_id", `unknown product "${event.service.product_id}" (not in the product catalogue)`);
  }
  if (event.type === "service.ip_changed" && existing) {
    const product = catalog.product(existing.product_id);
    const limit = product?.maxIpChanges ?? null;
    if (limit !== null && existing.ip_changes >= limit) {
      add("changes.ip", `IP change limit reached: product ${existing.product_id} allows ${limit} IP changes (max_ip_changes)`);
    }
    if (event.changes?.ip !== undefined && sameIp(event.changes.ip, existing.ip)) add("changes.ip", "is the licence's current IP");
    if (existing.status === "terminated") add("type", "the service is terminated");
  }
  if (event.type === "service.product_changed" && existing) {
    const to = catalog.product(event.changes!.product_id!);
    const from = catalog.product(existing.product_id);
    if (!to) {
      add("changes.product_id", `unknown product "${event.changes!.product_id}" (not in the product catalogue)`);
    } else if (to.kind !== "licence" || to.type !== "litespeed") {
      add("changes.product_id", `only a LiteSpeed core change can be applied; product "${to.productId}" is not a LiteSpeed licence`);
    } else if (!from || from.kind !== "licence" || from.type !== "litespeed") {
      add("changes.product_id", `only a LiteSpeed core change can be applied; the service's product "${existing.product_id}" is not a LiteSpeed licence`);
    }
    if (existing.status === "terminated") add("type", "the service is terminated");
  }
  return Object.keys(errors).length ? errors : undefined;
}
