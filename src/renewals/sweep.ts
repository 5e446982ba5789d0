import { jobOf } from "../jobs/define.js";
import { serviceQueueKey } from "../vocabulary/job-kinds.js";
import type { Store } from "../store/store.js";
import { RENEW } from "../intake/jobs.js";

export const DAY_MS = 86_400_000;

export interface SweepResult {
  /** Renewal jobs created by this sweep. */
  queued: { service_id: string; term_end: string; job_id: number }[];
  /** Due licences whose renewal for this term was already queued or done. */
  alreadyQueued: number;
}

/**
 * Finds licences to renew and only enqueues (as graphile-worker's cron does): active, term
 * ending within the lead window, and paid beyond the term. Suspended, terminated and unpaid
 * licences are never due. Safe under repeated and overlapping ticks, restarts and instances:
 * the renewal's unique key (one per licence and term) makes a second enqueue create nothing.
 */
export function createSweep(store: Store, leadDays: number) {
  const run = async (serviceId?: string): Promise<SweepResult> => {
    const rows = await store.renewals.sweep(
      leadDays * DAY_MS,
      (due) => jobOf(RENEW, { term_end: due.expires_at }, { serviceId: due.service_id, queueKey: serviceQueueKey(due.service_id) }),
      serviceId,
    );
    const result: SweepResult = { queued: [], alreadyQueued: 0 };
    for (const r of rows) {
      if (r.created) result.queued.push({ service_id: r.due.service_id, term_end: new Date(r.due.expires_at).toISOString(), job_id: r.id });
      else result.alreadyQueued++;
    }
    return result;
  };
  return {
    /** Every due licence. */
    sweep: () => run(),
    /** One service, right after its payment was recorded ("at once if it is already due"). */
    sweepService: (serviceId: string) => run(serviceId),
  };
}

export type Sweep = ReturnType<typeof createSweep>;
