import type { JobOps, ServiceOps, ServiceRow } from "../store/store.js";
import type { ErrorCode } from "../vocabulary/error-codes.js";
import type { Job } from "../vocabulary/jobs.js";
import { serviceQueueKey } from "../vocabulary/job-kinds.js";
import { isResolved, type JobWaiter } from "../jobs/waiter.js";
import { refusal, unknownService, type Answer } from "./answers.js";

export interface WaitDeps {
  services: Pick<ServiceOps, "get">;
  jobs: Pick<JobOps, "unfinished" | "retry">;
  waiter: JobWaiter;
  /** PROVISION_WAIT_SECONDS in ms. */
  waitMs: number;
  now: () => number;
  license(svc: ServiceRow): Promise<Answer>;
}

/**
 * The answer of a provisioning call once its work is done, or once PROVISION_WAIT_SECONDS have
 * passed: the licence (200), the refusal that stopped its job (502), or 202 pending. Its own
 * job's outcome only: other jobs of the service (a blocked renewal of the sweep's) are not the
 * call's, they only explain why its own waits.
 */
export function outcomeWaiter(deps: WaitDeps) {
  /** The blocked job, earlier in the service's queue, that keeps `job` from running. */
  const blockedBehind = async (job: Job): Promise<Job | undefined> => {
    if (!job.queueKey || job.state !== "queued") return undefined;
    const first = (await deps.jobs.unfinished(job.queueKey))[0];
    return first && first.id < job.id && first.state === "blocked" ? first : undefined;
  };

  return async (serviceId: string, jobId: number | undefined, kind: string): Promise<Answer> => {
    const deadline = deps.now() + deps.waitMs;
    if (jobId !== undefined) {
      // Called again after a refusal (the balance topped up, the token fixed): run the blocked job again.
      const head = (await deps.jobs.unfinished(serviceQueueKey(serviceId)))[0];
      if (head?.state === "blocked" && head.kind === kind && head.id <= jobId) await deps.jobs.retry(head.id);
    }
    // What the wait last saw blocking the call's job from earlier in its queue.
    let behind: Job | undefined;
    const own =
      jobId === undefined
        ? undefined
        : await deps.waiter.until(jobId, deadline, async (j) => {
            behind = isResolved(j) ? undefined : await blockedBehind(j);
            return isResolved(j) || behind !== undefined;
          });
    const svc = await deps.services.get(serviceId);
    if (!svc) return unknownService();
    if (!own || own.state === "succeeded") return deps.license(svc);
    if (own.state === "cancelled") {
      // Its own stop code (a balance it lacked) is no longer why: an operator ended it.
      const why = `job ${own.id} was cancelled by an operator${own.lastError ? ` after it stopped: ${own.lastError}` : ""}`;
      return refusal(502, "job_failed", why, { status: own.state, license_key: svc.license_key, job_id: own.id });
    }
    if (own.state === "blocked" || own.state === "failed") {
      return refusal(502, (own.errorCode as ErrorCode | null) ?? "job_failed", own.lastError ?? `job ${own.id} is ${own.state}`, {
        status: own.state,
        license_key: svc.license_key,
        job_id: own.id,
      });
    }
    // Not refused: accepted and queued. Behind a blocked job it runs, in order, once that job is
    // resolved (retried by the operator, healed, or re-run by the call that queued it).
    const message = behind
      ? `queued as job ${own.id} behind job ${behind.id} (${behind.kind}), which is blocked: ${behind.lastError ?? "see the job"}; ` +
        "it runs once that job is resolved, and the same call made again later answers with its outcome"
      : `still in progress (job ${own.id}${own.lastError ? `: ${own.lastError}` : ""}); ` +
        "the work goes on, and the same call made again later answers with its outcome";
    return { status: 202, body: { success: false, status: "pending", license_key: svc.license_key, message } };
  };
}
