import type { Alerts } from "../alerts/alerts.js";
import type { Clock } from "../jobs/clock.js";
import type { JobQueue } from "../jobs/queue.js";
import { JOB_KINDS } from "../lifecycle/job-kinds.js";
import type { Db } from "../store/database.js";
import { DAY_MS, renewalKey } from "./sweep.js";

/**
 * Blocked renewals come back by themselves at a modest interval, so a topped-up balance heals
 * the queue without the operator; attempts are not reset, so this never hides a failing job.
 */
export function healBlockedRenewals(queue: JobQueue, clock: Clock, minIntervalMs: number): number {
  return queue.requeueBlocked(JOB_KINDS.renew, clock.now() - minIntervalMs);
}

/**
 * Paid, active licences whose term ends within a day and whose renewal for that term was tried
 * and has not succeeded: the operator hears of each once, before the customer does.
 */
export function checkRenewalsAtRisk(db: Db, clock: Clock, alerts: Alerts): number {
  const rows = db
    .prepare(
      `SELECT s.service_id, s.ip, s.expires_at, j.id AS job_id, j.state, j.last_error FROM services s
       JOIN jobs j ON j.unique_key = 'renew:' || s.service_id || ':' || s.expires_at
       WHERE s.status = 'active' AND s.expires_at <= @soon AND s.paid_until > s.expires_at
         AND j.attempts > 0 AND j.state <> 'succeeded'`,
    )
    .all({ soon: clock.now() + DAY_MS }) as { service_id: string; ip: string; expires_at: number; job_id: number; state: string; last_error: string | null }[];
  for (const r of rows) {
    alerts.raise(
      `renewal-at-risk:${renewalKey(r.service_id, r.expires_at)}`,
      `renewal of service ${r.service_id} not done, term ends ${new Date(r.expires_at).toISOString()}`,
      `The licence of service ${r.service_id} (${r.ip}) ends ${new Date(r.expires_at).toISOString()}, less than a day away, ` +
        `and its renewal (job ${r.job_id}, ${r.state}) has not gone through: ${r.last_error ?? "no error recorded"}.`,
    );
  }
  return rows.length;
}
