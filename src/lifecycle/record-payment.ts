import { z } from "zod";
import type { JobHandler } from "../jobs/runner.js";
import type { LifecycleDeps } from "./deps.js";
import { addMonths, eventOutcome } from "./record.js";
import { mustGet } from "./targets.js";

const payloadSchema = z.object({ next_due_date: z.string().nullable().optional() });

/**
 * `service.renewed`: the customer paid; move paid-until forward (to the panel's next due date
 * when it gives one, else by one cycle). The renewal sweep buys the upstream term.
 */
export function recordPaymentHandler(deps: LifecycleDeps, afterPayment?: (serviceId: string) => void): JobHandler {
  const { services, clock, db } = deps;
  return async (job) => {
    const { next_due_date } = payloadSchema.parse(job.payload);
    const svc = mustGet(deps, job);
    const now = clock.now();
    const paidUntil = next_due_date
      ? Date.parse(next_due_date)
      : addMonths(svc.paid_until ?? svc.expires_at ?? now, svc.months);
    db.transaction(() => {
      services.update(svc.service_id, { paid_until: paidUntil }, now);
      services.addHistory({
        service_id: svc.service_id,
        at: now,
        event_id: job.eventId,
        job_id: job.id,
        action: "payment recorded",
        detail: `paid until ${new Date(paidUntil).toISOString()}`,
      });
      eventOutcome(db, job, "applied", null);
    })();
    afterPayment?.(svc.service_id);
  };
}
