import { JobSkippedError } from "../jobs/errors.js";
import type { Job } from "../vocabulary/jobs.js";
import type { ServiceRow, Store } from "../store/store.js";
import { JOB_KINDS, serviceQueueKey } from "../vocabulary/job-kinds.js";
import { project, queuedBehind } from "./projection.js";

/**
 * What a charge buys: a first licence (or bundle) for an order; one more term of a licence; a
 * suspended licence brought back where that may bill (Manage2's reactivation fee, CLN's register
 * again); or a licence bought for a change (CLN's register of the new IP or type before the old
 * one is removed, a conversion in place).
 */
export type ChargePurpose = "order" | "renewal" | "reactivation" | "change";

/**
 * The charging rule: a charge is the last step of a decision that still holds. Right before a
 * call that spends money, the job looks at what the service will be once everything already
 * accepted for it is applied (its row and the jobs queued behind this one), and buys nothing
 * for a service that is terminated or being terminated, for an order superseded by a newer one,
 * and (renewals) for a service that is not active or is being suspended. Undefined: buy.
 *
 * Pure, so it is table-tested; `checkCharge` is the one place charging jobs call it from.
 */
export function chargeRefusal(
  purpose: ChargePurpose,
  svc: ServiceRow,
  behind: readonly Job[],
  job: Pick<Job, "eventId">,
): string | undefined {
  if (purpose === "order" && job.eventId && svc.order_event_id && svc.order_event_id !== job.eventId) {
    return `superseded: the service was ordered again (event ${svc.order_event_id}); this older order buys nothing`;
  }
  if (svc.status === "terminated") return "the service is terminated";
  const p = project(svc, behind);
  const which = p.decidedBy ? ` (job ${p.decidedBy.id}, ${p.decidedBy.kind}, is queued behind this one)` : "";
  if (p.terminating) return `the service is being terminated${which}`;
  if (purpose === "renewal") {
    if (svc.status !== "active") return `the service is ${svc.status}`;
    if (p.status === "suspended") return `the service is being suspended${which}`;
  }
  // Brought back only to be ended again by the suspension queued behind it: a fee for nothing.
  if (purpose === "reactivation" && p.decidedBy?.kind === JOB_KINDS.suspend) return `the service is being suspended again${which}`;
  return undefined;
}

/**
 * Re-reads the service and its queue and applies the charging rule; throws JobSkippedError (the
 * job ends skipped, saying why) when the charge must not be made. Every charging call passes
 * through here: `once()` calls it, via `charging()`, right before it records the intent and sends.
 */
export async function checkCharge(deps: { store: Pick<Store, "services" | "jobs"> }, job: Pick<Job, "id" | "eventId" | "serviceId">, purpose: ChargePurpose): Promise<void> {
  const svc = job.serviceId ? await deps.store.services.get(job.serviceId) : undefined;
  if (!svc) throw new JobSkippedError(`service ${job.serviceId ?? "(none)"} is not known to the bridge; nothing bought`);
  const behind = queuedBehind(await deps.store.jobs.unfinished(serviceQueueKey(svc.service_id)), job);
  const why = chargeRefusal(purpose, svc, behind, job);
  if (why) throw new JobSkippedError(`${why}; nothing bought`);
}

/**
 * The same projection before customer mail: an install mail tells a customer to install a
 * licence, so none goes out for a service that is terminated or being terminated (a termination
 * accepted while its order's answer was being settled). The mail job runs beside the service's
 * queue, so every unfinished job of that queue is what is accepted for the service. Undefined: send.
 */
export function installMailRefusal(svc: ServiceRow, unfinished: readonly Job[]): string | undefined {
  if (svc.status === "terminated") return "the service is terminated";
  const p = project(svc, unfinished);
  if (p.terminating) return `the service is being terminated${p.decidedBy ? ` (job ${p.decidedBy.id}, ${p.decidedBy.kind}, is queued)` : ""}`;
  return undefined;
}

/** Reads the service and its queue again and applies installMailRefusal: the reason not to mail, or undefined. */
export async function checkInstallMail(deps: { store: Pick<Store, "services" | "jobs"> }, serviceId: string): Promise<string | undefined> {
  const svc = await deps.store.services.get(serviceId);
  if (!svc) return `service ${serviceId} is not known to the bridge`;
  return installMailRefusal(svc, await deps.store.jobs.unfinished(serviceQueueKey(serviceId)));
}
