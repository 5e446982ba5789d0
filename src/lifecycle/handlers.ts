import type { JobDefinition } from "../jobs/define.js";
import type { Job } from "../vocabulary/jobs.js";
import type { ServiceChange, StopRecord } from "../store/store.js";
import { changeIpJob } from "./change-ip.js";
import { changeProductJob } from "./change-product.js";
import type { LifecycleDeps } from "./deps.js";
import { enforceSuspensionJob } from "./enforce-suspension.js";
import { JOB_KINDS } from "../vocabulary/job-kinds.js";
import { recordPaymentJob } from "./record-payment.js";
import { registerJob } from "./register.js";
import { renewJob } from "./renew.js";
import { statusJob } from "./status.js";
import { jobChange, jobSkipped } from "./service-changes.js";

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

/** How the history names a job kind's skip ("renewal skipped: the service is being terminated"). */
const SKIPPED_ACTION: Readonly<Record<string, string>> = {
  [JOB_KINDS.register]: "registration skipped",
  [JOB_KINDS.renew]: "renewal skipped",
};

/**
 * A job that found its work no longer wanted (JobSkippedError: the charging rule, a term already
 * renewed) says so in its service's history and its event's outcome, committed with its ending.
 */
export function skipRecord(job: Job, why: string): ServiceChange | undefined {
  if (!job.serviceId) return undefined;
  return jobSkipped(job, job.serviceId, SKIPPED_ACTION[job.kind] ?? `${job.kind} skipped`, why);
}
