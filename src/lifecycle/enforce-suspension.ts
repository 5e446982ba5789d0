import { z } from "zod";
import { JobFailedError } from "../jobs/errors.js";
import type { JobHandler } from "../jobs/runner.js";
import { NotFoundError } from "../reseller/errors.js";
import { ipSchema, productTypeSchema } from "../reseller/vocabulary.js";
import type { LifecycleDeps } from "./deps.js";
import { mustGet } from "./targets.js";

const payloadSchema = z.object({ ip: ipSchema, type: productTypeSchema });

/**
 * Reconcile's repair of a licence the reseller has active while the bridge has its service
 * suspended or terminated. It runs as a job in the service's queue, so it can never overtake
 * (or be overtaken by) an unsuspend the panel sent meanwhile: by the time it runs, the service's
 * status is the one its events left, and an active service is left alone.
 */
export function enforceSuspensionHandler(deps: LifecycleDeps): JobHandler {
  const { services, upstream, clock } = deps;
  return async (job) => {
    const { ip, type } = payloadSchema.parse(job.payload);
    const svc = mustGet(deps, job);
    const history = (action: string, detail: string) =>
      services.addHistory({ service_id: svc.service_id, at: clock.now(), job_id: job.id, action: `reconcile: ${action}`, detail });
    if (svc.status !== "suspended" && svc.status !== "terminated") {
      history("suspension skipped", `the service is ${svc.status} again; the ${type} licence at ${ip} is left as it is`);
      return;
    }
    try {
      await upstream.suspend(ip, type);
    } catch (err) {
      if (err instanceof NotFoundError) throw new JobFailedError(`the reseller has no ${type} licence at ${ip} any more; nothing to suspend`);
      throw err;
    }
    history("suspended upstream", `the reseller had the ${type} licence at ${ip} active while the service is ${svc.status}; suspended it there`);
  };
}
