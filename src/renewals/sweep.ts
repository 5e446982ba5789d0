import type { Clock } from "../jobs/clock.js";
import type { JobQueue } from "../jobs/queue.js";
import { JOB_KINDS, serviceQueueKey } from "../lifecycle/job-kinds.js";
import type { Db } from "../store/database.js";

export const DAY_MS = 86_400_000;

export interface SweepResult {
  /** Renewal jobs created by this sweep. */
  queued: { service_id: string; term_end: string; job_id: number }[];
  /** Due licences whose renewal for this term was already queued or done. */
  alreadyQueued: number;
}

/** The unique key of one licence's renewal for one term: enqueueing it twice creates nothing. */
export function renewalKey(serviceId: string, termEnd: number): string {
  return `renew:${serviceId}:${termEnd}`;
}

/**
 * Finds licences to renew and only enqueues (as graphile-worker's cron does): active, term
 * ending within the lead window, and paid beyond the term. Suspended, terminated and unpaid
 * licences are never due. Safe under repeated and overlapping ticks and restarts.
 */
export function createSweep(db: Db, queue: JobQueue, clock: Clock, leadDays: number) {
  // Served by the partial index services_due (asserted with EXPLAIN QUERY PLAN in a test).
  const due = db.prepare(
    `SELECT service_id, expires_at FROM services
     WHERE status = 'active' AND expires_at <= @horizon AND paid_until > expires_at`,
  );
  const dueOne = db.prepare(
    `SELECT service_id, expires_at FROM services
     WHERE service_id = @service_id AND status = 'active' AND expires_at <= @horizon AND paid_until > expires_at`,
  );

  const enqueueAll = (rows: { service_id: string; expires_at: number }[]): SweepResult => {
    const result: SweepResult = { queued: [], alreadyQueued: 0 };
    for (const row of rows) {
      const { id, created } = queue.enqueue({
        kind: JOB_KINDS.renew,
        queueKey: serviceQueueKey(row.service_id),
        serviceId: row.service_id,
        uniqueKey: renewalKey(row.service_id, row.expires_at),
        payload: { term_end: row.expires_at },
      });
      if (created) result.queued.push({ service_id: row.service_id, term_end: new Date(row.expires_at).toISOString(), job_id: id });
      else result.alreadyQueued++;
    }
    return result;
  };

  const horizon = () => clock.now() + leadDays * DAY_MS;
  const all = db.transaction(() => enqueueAll(due.all({ horizon: horizon() }) as { service_id: string; expires_at: number }[]));
  const one = db.transaction((serviceId: string) =>
    enqueueAll(dueOne.all({ service_id: serviceId, horizon: horizon() }) as { service_id: string; expires_at: number }[]),
  );

  return {
    /** Every due licence. */
    sweep: (): SweepResult => all.immediate(),
    /** One service, right after its payment was recorded ("at once if it is already due"). */
    sweepService: (serviceId: string): SweepResult => one.immediate(serviceId),
    /** The SQL of the due query, for the index test. */
    dueSql: due.source as string,
  };
}

export type Sweep = ReturnType<typeof createSweep>;
