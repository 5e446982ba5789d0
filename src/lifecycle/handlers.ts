import type { JobDefinition } from "../jobs/define.js";
import type { Job } from "../jobs/types.js";
import type { StopRecord } from "../store/store.js";
import { changeIpJob } from "./change-ip.js";
import { changeProductJob } from "./change-product.js";
import type { LifecycleDeps } from "./deps.js";
import { enforceSuspensionJob } from "./enforce-suspension.js";
import { JOB_KINDS } from "./job-kinds.js";
import { recordPaymentJob } from "./record-payment.js";
import { registerJob } from "./register.js";
import { renewJob } from "./renew.js";
import { statusJob } from "./status.js";
import { jobChange } from "./targets.js";

/** The licence lifecycle's job kinds, each with its handler. */
export function lifecycleJobs(deps: LifecycleDeps, hooks: { afterPayment?: (serviceId: string) => Promise<unknown> } = {}): JobDefinition[] {
  return [
    // A service ordered again may find its licence already past its term: the sweep renews it at once.
    registerJob(deps, hooks.afterPayment),
    statusJob(deps, "suspend"),
    statusJob(deps, "unsuspend"),
    statusJob(deps, "terminate"),
    changeIpJob(deps),
    changeProductJob(deps),
    recordPaymentJob(deps, hooks.afterPayment),
    renewJob(deps),
    enforceSuspensionJob(deps),
  ];
}

/**
 * When a job stops for good (failed) or for the operator (blocked), the service shows why;
 * a registration that failed for good leaves the service `failed`. The store writes this in the
 * transaction that records the job's ending.
 */
export function stopRecord(job: Job, message: string): StopRecord | undefined {
  if (!job.serviceId) return undefined;
  return (state, svc) => {
    const failedRegistration = state === "failed" && job.kind === JOB_KINDS.register && svc.status === "pending";
    const { serviceId: _, ...change } = jobChange(job, svc.service_id, {
      patch: { last_error: message, ...(failedRegistration ? { status: "failed" as const } : {}) },
      history: [{ action: `${job.kind} ${state}`, detail: message }],
      ...(state === "failed" ? { outcome: ["failed", message] as const } : {}),
    });
    return change;
  };
}
