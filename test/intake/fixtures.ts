import type { ServiceRow } from "../../src/store/store.js";
import type { Job } from "../../src/vocabulary/jobs.js";
import type { ServiceStatus } from "../../src/vocabulary/service-statuses.js";

/** A stored service (cPanel at 203.0.113.10, ordered by event ev-order) and the jobs queued for it, for the deciding core's tables (and reconcile's large book). */

export function row(status: ServiceStatus, over: Partial<ServiceRow> = {}): ServiceRow {
  return {
    service_id: "s1",
    product_id: "12",
    kind: "licence",
    type: "cpanel",
    bundle: null,
    bundle_key: null,
    variant: null,
    upstream_variant: null,
    ip: "203.0.113.10",
    billing_cycle: "monthly",
    months: 1,
    status,
    customer_email: null,
    customer_name: null,
    expires_at: null,
    paid_until: null,
    ip_changes: 0,
    companions: "[]",
    last_error: null,
    order_event_id: "ev-order",
    license_key: "lb_x",
    module: null,
    provider: "reseller",
    sku: null,
    upstream_id: null,
    created_at: 0,
    updated_at: 0,
    ...over,
  };
}

let nextId = 100;
export function queued(kind: string, payload: Record<string, unknown> = {}): Job {
  const id = nextId++;
  return {
    id,
    kind,
    queueKey: "svc:s1",
    serviceId: "s1",
    eventId: `ev-${id}`,
    uniqueKey: null,
    payload,
    state: "queued",
    attempts: 0,
    maxAttempts: 20,
    runAt: 0,
    leaseUntil: null,
    leasedBy: null,
    intent: null,
    lastError: null,
    errorCode: null,
    skipped: null,
    createdAt: 0,
    updatedAt: 0,
  };
}

