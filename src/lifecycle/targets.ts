import { JobFailedError } from "../jobs/errors.js";
import type { Job } from "../jobs/types.js";
import type { ProductType } from "../reseller/vocabulary.js";
import type { ServiceRow } from "../store/services.js";
import type { LifecycleDeps } from "./deps.js";
import { bundleComponents } from "./upstream.js";

/** The upstream licences a service stands for: its own, or its bundle's components. */
export function licenceTypes(svc: ServiceRow): ProductType[] {
  return svc.kind === "bundle" ? bundleComponents(svc.bundle ?? "") : [svc.type as ProductType];
}

/** The service a job is about; a job for a service the bridge does not know can never succeed. */
export function mustGet(deps: Pick<LifecycleDeps, "services">, job: Job): ServiceRow {
  const svc = job.serviceId ? deps.services.get(job.serviceId) : undefined;
  if (!svc) throw new JobFailedError(`service ${job.serviceId ?? "(none)"} is not known to the bridge`);
  return svc;
}
