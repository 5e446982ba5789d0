import { defineJob } from "../jobs/define.js";
import type { LifecycleDeps } from "./deps.js";
import { addMonths } from "./record.js";
import { jobChange, mustGet } from "./service-changes.js";
import { RECORD_PAYMENT } from "../intake/jobs.js";


/**
 * `service.renewed`: the customer paid; move paid-until forward (to the panel's next due date
 * when it gives one, else by one cycle). The renewal sweep buys the upstream term.
 */
export function recordPaymentJob(deps: LifecycleDeps, afterPayment?: (serviceId: string) => Promise<unknown>) {
  return defineJob(RECORD_PAYMENT, async (job) => {
    const { next_due_date } = job.payload;
    const svc = await mustGet(deps, job);
    const paidUntil = next_due_date ? Date.parse(next_due_date) : addMonths(svc.paid_until ?? svc.expires_at ?? deps.clock.now(), svc.months);
    await deps.store.services.change(
      jobChange(job, svc.service_id, {
        patch: { paid_until: paidUntil },
        history: [{ action: "payment recorded", detail: `paid until ${new Date(paidUntil).toISOString()}` }],
        outcome: ["applied", null],
      }),
    );
    await afterPayment?.(svc.service_id);
  });
}
