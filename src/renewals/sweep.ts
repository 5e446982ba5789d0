import { jobOf } from "../jobs/define.js";
import { serviceQueueKey } from "../vocabulary/job-kinds.js";
import type { AuditDraft, Store } from "../store/store.js";
import { RENEW } from "../intake/jobs.js";
import { renewalDue } from "../intake/renewal-due.js";

export const DAY_MS = 86_400_000;

export interface SweepResult {
  /** Renewal jobs created by this sweep. */
  queued: { service_id: string; term_end: string; job_id: number }[];
  /** Due licences whose renewal for this term was already queued or done. */
  alreadyQueued: number;
}

/**
 * Finds licences to renew and only enqueues (as graphile-worker's cron does): the store reads
 * the active licences whose term ends within the lead window, and `renewalDue` says which are
 * due (paid beyond the term; suspended, terminated and unpaid licences never are). Safe under
 * repeated and overlapping ticks, restarts and instances: the renewal's unique key (one per
 * licence and term) makes a second enqueue create nothing.
 */
export function createSweep(store: Store, leadDays: number) {
  const leadMs = leadDays * DAY_MS;
  const run = async (serviceId?: string, audit?: AuditDraft): Promise<SweepResult> => {
    const rows = await store.renewals.sweep(
      leadMs,
      (candidate, now) => {
        const due = renewalDue(candidate, { now, leadMs });
        return due.due ? jobOf(RENEW, { term_end: due.term }, { serviceId: candidate.service_id, queueKey: serviceQueueKey(candidate.service_id) }) : undefined;
      },
      serviceId,
      audit,
    );
    const result: SweepResult = { queued: [], alreadyQueued: 0 };
    for (const r of rows) {
      if (r.created) result.queued.push({ service_id: r.due.service_id, term_end: new Date(r.due.expires_at).toISOString(), job_id: r.id });
      else result.alreadyQueued++;
    }
    return result;
  };
  return {
    /** Every due licence; with `audit` (an operator's sweep), an entry per renewal it queued, written with it. */
    sweep: (audit?: AuditDraft) => run(undefined, audit),
    /** One service, right after its payment was recorded ("at once if it is already due"). */
    sweepService: (serviceId: string) => run(serviceId),
  };
}

export type Sweep = ReturnType<typeof createSweep>;
