import { JobFailedError } from "../jobs/errors.js";
import type { Job } from "../vocabulary/jobs.js";
import { bundleComponents } from "../reseller/upstream.js";
import type { ProductType } from "../vocabulary/products.js";
import type { EventOutcome, NewJob, ServiceChange, ServicePatch, ServiceRow } from "../store/store.js";
import type { LifecycleDeps } from "./deps.js";

/**
 * The reseller's licences a service stands for: its own, or its bundle's components. For
 * reconcile, the forecast and the install mail, which read the reseller's list until they read
 * each provider's; the jobs ask the service's provider (`partsOf`).
 */
export function licenseTypes(svc: Pick<ServiceRow, "kind" | "type" | "bundle">): ProductType[] {
  return svc.kind === "bundle" ? bundleComponents(svc.bundle ?? "") : [svc.type as ProductType];
}

/** The service a job is about; a job for a service the bridge does not know can never succeed. */
export async function mustGet(deps: Pick<LifecycleDeps, "store">, job: Pick<Job, "serviceId">): Promise<ServiceRow> {
  const svc = job.serviceId ? await deps.store.services.get(job.serviceId) : undefined;
  if (!svc) throw new JobFailedError(`service ${job.serviceId ?? "(none)"} is not known to the bridge`);
  return svc;
}

/**
 * What a job's step writes about its service, in one transaction: the columns, history entries
 * that name the job and its event, the event's outcome, the jobs it queues.
 */
export function jobChange(
  job: Pick<Job, "id" | "eventId">,
  serviceId: string,
  c: { patch?: ServicePatch; history?: { action: string; detail?: string | null }[]; outcome?: readonly [EventOutcome, string | null]; enqueue?: NewJob[] },
): ServiceChange {
  return {
    serviceId,
    ...(c.patch ? { patch: c.patch } : {}),
    history: (c.history ?? []).map((h) => ({ ...h, event_id: job.eventId, job_id: job.id })),
    ...(c.outcome && job.eventId ? { event: { id: job.eventId, outcome: c.outcome[0], detail: c.outcome[1] } } : {}),
    ...(c.enqueue ? { enqueue: c.enqueue } : {}),
  };
}

/** A job that found nothing to do: one history entry saying why, and its event's outcome "skipped". */
export function jobSkipped(job: Pick<Job, "id" | "eventId">, serviceId: string, action: string, why: string): ServiceChange {
  return jobChange(job, serviceId, { history: [{ action, detail: why }], outcome: ["skipped", why] });
}
