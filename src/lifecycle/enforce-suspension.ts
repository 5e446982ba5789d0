import { defineJob } from "../jobs/define.js";
import { JobFailedError } from "../jobs/errors.js";
import type { LifecycleDeps } from "./deps.js";
import { jobChange, mustGet } from "./service-changes.js";
import { ENFORCE_SUSPENSION } from "../intake/jobs.js";


/**
 * Reconcile's repair of a licence the provider has active while the bridge has its service
 * suspended or terminated. It runs as a job in the service's queue, so it can never overtake
 * (or be overtaken by) an unsuspend the panel sent meanwhile: by the time it runs, the service's
 * status is the one its events left, and an active service is left alone.
 */
export function enforceSuspensionJob(deps: LifecycleDeps) {
  return defineJob(ENFORCE_SUSPENSION, async (job) => {
    const { ip, type } = job.payload;
    const svc = await mustGet(deps, job);
    const history = (action: string, detail: string) => deps.store.services.change(jobChange(job, svc.service_id, { history: [{ action: `reconcile: ${action}`, detail }] }));
    if (svc.status !== "suspended" && svc.status !== "terminated") {
      await history("suspension skipped", `the service is ${svc.status} again; the ${type} licence at ${ip} is left as it is`);
      return;
    }
    // The licence's provider as reconcile found it (a payload from before providers: the reseller's).
    const provider = deps.providers.providerFor({ provider: job.payload.provider ?? "reseller" });
    const { sku = type, upstream_id } = job.payload;
    const outcome = await provider.suspend({ ip, sku, ...(upstream_id ? { upstreamId: upstream_id } : {}) });
    if (!outcome.done) throw new JobFailedError(`${provider.label} has no ${type} licence at ${ip} any more; nothing to suspend`, "upstream_not_found");
    await history("suspended upstream", `${provider.label} had the ${type} licence at ${ip} active while the service is ${svc.status}; suspended it there`);
  });
}
