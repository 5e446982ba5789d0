import { describe, expect, it } from "vitest";
import { chargeRefusal, installMailRefusal, type ChargePurpose } from "../../src/intake/charge-rule.js";
import { JOB_KINDS } from "../../src/vocabulary/job-kinds.js";
import type { ServiceStatus } from "../../src/vocabulary/service-statuses.js";
import { queued, row } from "./fixtures.js";

/** The charging rule alone: the service's row and the jobs queued behind the charging job → buy, or why not. */

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
  ["a reactivation (an unsuspension that may bill) of a suspended service buys", "reactivation", "suspended", [], undefined],
  ["a reactivation with a payment behind it buys", "reactivation", "suspended", [recordPayment], undefined],
  ["a reactivation with a termination behind it buys nothing", "reactivation", "suspended", [terminate], /being terminated \(job \d+, terminate/],
  ["a reactivation with a suspension behind it buys nothing: it would be ended at once", "reactivation", "suspended", [suspend], /being suspended again \(job \d+, suspend/],
  ["a reactivation of a terminated service buys nothing", "reactivation", "terminated", [], /is terminated/],
  ["a change that buys (a licence at the new IP first) of an active service buys", "change", "active", [], undefined],
  ["a change with a suspension behind it buys (a suspension may be lifted)", "change", "active", [suspend], undefined],
  ["a change with a termination behind it buys nothing", "change", "active", [terminate], /being terminated/],
  ["a change of a terminated service buys nothing", "change", "terminated", [], /is terminated/],
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

const mailCases: [string, ServiceStatus, string[], RegExp | undefined][] = [
  ["an active service is mailed", "active", [], undefined],
  ["a service with a suspension queued is mailed (a suspension may be lifted)", "active", [suspend], undefined],
  ["a suspended service is mailed", "suspended", [], undefined],
  ["a service with a termination queued is not mailed", "active", [terminate], /being terminated \(job \d+, terminate/],
  ["a terminated service is not mailed", "terminated", [], /is terminated/],
  ["a service terminated and ordered again (queued) is mailed: the new order is wanted", "active", [terminate, register], undefined],
];

describe("the same projection before an install mail", () => {
  it.each(mailCases)("%s", (_name, status, queue, refusal) => {
    const why = installMailRefusal(row(status), queue.map((k) => (k === register ? queued(k, { reactivate: true }) : queued(k))));
    if (refusal) expect(why).toMatch(refusal);
    else expect(why).toBeUndefined();
  });
});
