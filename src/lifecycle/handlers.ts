import type { JobHandler, RunnerObserver } from "../jobs/runner.js";
import { changeIpHandler } from "./change-ip.js";
import { changeProductHandler } from "./change-product.js";
import type { LifecycleDeps } from "./deps.js";
import { JOB_KINDS } from "./job-kinds.js";
import { enforceSuspensionHandler } from "./enforce-suspension.js";
import { eventOutcome } from "./record.js";
import { recordPaymentHandler } from "./record-payment.js";
import { registerHandler } from "./register.js";
import { renewHandler } from "./renew.js";
import { statusHandler } from "./status.js";

export function lifecycleHandlers(deps: LifecycleDeps, hooks: { afterPayment?: (serviceId: string) => void } = {}): Record<string, JobHandler> {
  return {
    // A service ordered again may find its licence already past its term: the sweep renews it at once.
    [JOB_KINDS.register]: registerHandler(deps, hooks.afterPayment),
    [JOB_KINDS.suspend]: statusHandler(deps, "suspend"),
    [JOB_KINDS.unsuspend]: statusHandler(deps, "unsuspend"),
    [JOB_KINDS.terminate]: statusHandler(deps, "terminate"),
    [JOB_KINDS.changeIp]: changeIpHandler(deps),
    [JOB_KINDS.changeProduct]: changeProductHandler(deps),
    [JOB_KINDS.recordPayment]: recordPaymentHandler(deps, hooks.afterPayment),
    [JOB_KINDS.renew]: renewHandler(deps),
    [JOB_KINDS.enforceSuspension]: enforceSuspensionHandler(deps),
  };
}

/**
 * When a job stops for good (failed) or for the operator (blocked), the service shows why;
 * a registration that failed for good leaves the service `failed`.
 */
export function recordStoppedJobs(deps: LifecycleDeps): NonNullable<RunnerObserver["jobStopped"]> {
  const { services, clock, db } = deps;
  return (job, state, message) => {
    if (!job.serviceId) return;
    const svc = services.get(job.serviceId);
    if (!svc) return;
    db.transaction(() => {
      const failedRegistration = state === "failed" && job.kind === JOB_KINDS.register && svc.status === "pending";
      services.update(svc.service_id, { last_error: message, ...(failedRegistration ? { status: "failed" as const } : {}) }, clock.now());
      services.addHistory({
        service_id: svc.service_id,
        at: clock.now(),
        event_id: job.eventId,
        job_id: job.id,
        action: `${job.kind} ${state}`,
        detail: message,
      });
      if (state === "failed") eventOutcome(db, job, "failed", message);
    })();
  };
}
