import { defineJob, type JobDefinition } from "../jobs/define.js";
import { JobFailedError } from "../jobs/errors.js";
import { NotFoundError } from "../reseller/errors.js";
import type { ServiceStatus } from "../vocabulary/service-statuses.js";
import type { LifecycleDeps } from "./deps.js";
import { jobChange, jobSkipped, licenseTypes, mustGet } from "./service-changes.js";
import { SUSPEND, TERMINATE, UNSUSPEND } from "../intake/jobs.js";

type Change = "suspend" | "unsuspend" | "terminate";

/**
 * What a status event does, by the service's current status: the upstream call to make (if
 * any) and the status it leaves. Suspend and unsuspend are idempotent upstream, so a retry
 * after a lost answer simply calls again.
 */
function transition(change: Change, from: ServiceStatus): { call: "suspend" | "unsuspend" | null; to: ServiceStatus } | { skip: string } {
  switch (change) {
    case "suspend":
      if (from === "active") return { call: "suspend", to: "suspended" };
      if (from === "suspended") return { call: null, to: "suspended" };
      return { skip: `nothing to suspend: the service is ${from}` };
    case "unsuspend":
      if (from === "suspended") return { call: "unsuspend", to: "active" };
      if (from === "active") return { call: null, to: "active" };
      return { skip: `nothing to unsuspend: the service is ${from}` };
    case "terminate":
      // Terminated licences are suspended upstream and never renewed again.
      if (from === "active") return { call: "suspend", to: "terminated" };
      if (from === "terminated") return { skip: "already terminated" };
      return { call: null, to: "terminated" };
  }
}


/** `service.suspended`, `service.unsuspended`, `service.terminated`. */
export function statusJob(deps: LifecycleDeps, change: Change): JobDefinition<Record<string, unknown>> {
  const kind = change === "suspend" ? SUSPEND : change === "unsuspend" ? UNSUSPEND : TERMINATE;
  return defineJob(kind, async (job, ctx) => {
    const svc = await mustGet(deps, job);
    const step = transition(change, svc.status);
    if ("skip" in step) {
      await deps.store.services.change(jobSkipped(job, svc.service_id, `${change} skipped`, step.skip));
      return;
    }
    const gone: string[] = [];
    if (step.call) {
      for (const type of licenseTypes(svc)) {
        try {
          await deps.upstream[step.call](svc.ip, type);
        } catch (err) {
          if (err instanceof NotFoundError) {
            // Terminating a licence the reseller no longer has leaves nothing to suspend: the
            // service ends terminated all the same (never renewed, its address free again).
            if (change === "terminate") {
              gone.push(type);
              continue;
            }
            throw new JobFailedError(
              `the reseller has no ${type} licence for ${svc.ip}, so it cannot be ${step.call}ed; run reconcile to see the drift`,
              "upstream_not_found",
            );
          }
          throw err;
        }
        ctx.logger.debug({ type, call: step.call }, "upstream status changed");
      }
    }
    await deps.store.services.change(
      jobChange(job, svc.service_id, {
        patch: { status: step.to, last_error: null },
        history: [
          {
            action: change === "terminate" ? "terminated" : `${change}ed`,
            detail: !step.call
              ? "no upstream call needed"
              : gone.length
                ? `upstream ${step.call}; the reseller has no ${gone.join(", ")} licence for ${svc.ip}, so there was nothing to suspend`
                : `upstream ${step.call}`,
          },
        ],
        outcome: ["applied", null],
      }),
    );
  });
}
