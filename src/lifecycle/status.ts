import { JobFailedError } from "../jobs/errors.js";
import type { JobHandler } from "../jobs/runner.js";
import type { Job } from "../jobs/types.js";
import { NotFoundError } from "../reseller/errors.js";
import type { ServiceRow, ServiceStatus } from "../store/services.js";
import type { LifecycleDeps } from "./deps.js";
import { eventOutcome } from "./record.js";
import { mustGet } from "./targets.js";
import { licenceTypes } from "./targets.js";

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

export function statusHandler(deps: LifecycleDeps, change: Change): JobHandler {
  const { services, upstream, clock, db } = deps;
  return async (job, ctx) => {
    const svc = mustGet(deps, job);
    const step = transition(change, svc.status);
    if ("skip" in step) {
      record(deps, job, svc, `${change} skipped`, step.skip);
      eventOutcome(db, job, "skipped", step.skip);
      return;
    }
    if (step.call) {
      for (const type of licenceTypes(svc)) {
        try {
          await upstream[step.call](svc.ip, type);
        } catch (err) {
          if (err instanceof NotFoundError) {
            throw new JobFailedError(
              `the reseller has no ${type} licence for ${svc.ip}, so it cannot be ${step.call}ed; run reconcile to see the drift`,
            );
          }
          throw err;
        }
        ctx.logger.debug({ type, call: step.call }, "upstream status changed");
      }
    }
    db.transaction(() => {
      services.update(svc.service_id, { status: step.to, last_error: null }, clock.now());
      record(deps, job, svc, change === "terminate" ? "terminated" : `${change}ed`, step.call ? `upstream ${step.call}` : "no upstream call needed");
      eventOutcome(db, job, "applied", null);
    })();
  };
}

function record(deps: LifecycleDeps, job: Job, svc: ServiceRow, action: string, detail: string): void {
  deps.services.addHistory({
    service_id: svc.service_id,
    at: deps.clock.now(),
    event_id: job.eventId,
    job_id: job.id,
    action,
    detail,
  });
}
