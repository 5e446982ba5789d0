import { describe, expect, it } from "vitest";
import { chargeRefusal, type ChargePurpose } from "../../src/intake/charge-rule.js";
import { JOB_KINDS } from "../../src/vocabulary/job-kinds.js";
import type { Job } from "../../src/vocabulary/jobs.js";
import type { ServiceRow } from "../../src/store/store.js";
import type { ServiceStatus } from "../../src/vocabulary/service-statuses.js";

/** The charging rule alone: the service's row and the jobs queued behind the charging job → buy, or why not. */

function row(status: ServiceStatus, over: Partial<ServiceRow> = {}): ServiceRow {
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
    created_at: 0,
    updated_at: 0,
    ...over,
  };
}

let nextId = 100;
function queued(kind: string, payload: Record<string, unknown> = {}): Job {
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

const { terminate, suspend, unsuspend, register, changeIp, recordPayment } = JOB_KINDS;

const cases: [string, ChargePurpose, ServiceStatus, string[], RegExp | undefined][] = [
  ["a renewal of an active service with nothing behind it buys", "renewal", "active", [], undefined],
  ["a renewal with a payment and an IP change behind it buys", "renewal", "active", [recordPayment, changeIp], undefined],
  ["a renewal with a termination behind it buys nothing", "renewal", "active", [terminate], /being terminated \(job \d+, terminate/],
  ["a renewal with a suspension behind it buys nothing", "renewal", "active", [suspend], /being suspended/],
  ["a renewal with a suspension and its undoing behind it buys", "renewal", "active", [suspend, unsuspend], undefined],
  ["a renewal with an unsuspension, then a suspension behind it buys nothing", "renewal", "active", [unsuspend, suspend], /being suspended/],
  ["a renewal of a suspended service buys nothing", "renewal", "suspended", [], /is suspended/],
  ["a renewal of a suspended service about to be unsuspended waits for it: nothing now", "renewal", "suspended", [unsuspend], /is suspended/],
  ["a renewal of a terminated service buys nothing", "renewal", "terminated", [], /is terminated/],
  ["a renewal of a pending service buys nothing", "renewal", "pending", [], /is pending/],
  ["an order buys", "order", "pending", [], undefined],
  ["an order with a suspension behind it buys (a suspension may be lifted)", "order", "pending", [suspend], undefined],
  ["an order with a termination behind it buys nothing", "order", "pending", [terminate], /being terminated/],
  ["an order of a failed service with a termination behind it buys nothing", "order", "failed", [terminate], /being terminated/],
  ["an order of a terminated service buys nothing", "order", "terminated", [], /is terminated/],
];

describe("the charging rule", () => {
  it.each(cases)("%s", (_name, purpose, status, behind, refusal) => {
    const why = chargeRefusal(purpose, row(status), behind.map((k) => queued(k)), { eventId: "ev-order" });
    if (refusal) expect(why).toMatch(refusal);
    else expect(why).toBeUndefined();
  });

  it("an order with a termination and a new order (ordered again) behind it buys: the service is wanted", () => {
    expect(chargeRefusal("order", row("pending"), [queued(terminate), queued(register, { reactivate: true })], { eventId: "ev-order" })).toBeUndefined();
  });

  it("an order superseded by a newer one buys nothing", () => {
    expect(chargeRefusal("order", row("pending", { order_event_id: "ev-newer" }), [], { eventId: "ev-order" })).toMatch(/superseded.*ev-newer/);
  });
});
