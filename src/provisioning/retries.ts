import { project } from "../intake/projection.js";
import { isResolved } from "../jobs/waiter.js";
import type { JobOps, ServiceRow } from "../store/store.js";
import { JOB_KINDS, serviceQueueKey } from "../vocabulary/job-kinds.js";

/**
 * A dateless renew made again within a day after the last one ended is the same call retried
 * (a timeout, a 202's re-run, a panel's next task run), not a second payment: the next real one
 * of the shortest cycle comes a month later. Panels that know the due date send it, and a date
 * is idempotent by itself.
 */
const RENEW_REPEAT_WINDOW_MS = 24 * 60 * 60_000;

/**
 * The webhook id of a dateless renew: without a date each renewal adds a cycle, so a retry must
 * be the same event. The id names the renewal recorded before this one: a dateless renewal still
 * under way, or ended within the window, is this call's (the same id: a duplicate, answered with
 * its outcome); otherwise this is a payment of its own. Not once the service is terminated, or
 * about to be: then it is a new event, which the core refuses as it refuses a dated one.
 */
export async function datelessRenewalId(jobs: Pick<JobOps, "list" | "unfinished">, svc: ServiceRow, nowMs: number): Promise<string> {
  const [last, previous] = await jobs.list({ serviceId: svc.service_id, kind: JOB_KINDS.recordPayment, limit: 2 });
  const dateless = last && typeof (last.payload as { next_due_date?: unknown } | null)?.next_due_date !== "string";
  const ending = project(svc, await jobs.unfinished(serviceQueueKey(svc.service_id))).terminated;
  const lastIsThis = dateless && !ending && (!isResolved(last) || nowMs - last.updatedAt < RENEW_REPEAT_WINDOW_MS);
  const before = lastIsThis ? previous : last;
  return `prov:renew:${svc.service_id}:after:${before ? (before.eventId ?? `job-${before.id}`) : "none"}`;
}
