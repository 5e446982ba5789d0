import type { Clock } from "../../clock.js";
import { RENEWAL_MIN_GAP_MS, type DueRenewal, type RenewalOps } from "../store.js";
import type { Db } from "./database.js";
import type { SqliteJobs } from "./jobs.js";

/** The renewal sweep's queries on SQLite; `services_due (status, expires_at)` serves them as a range scan. */
export function sqliteRenewals(db: Db, clock: Clock, jobs: SqliteJobs): RenewalOps & { dueSql: string } {
  const dueSql = `SELECT service_id, expires_at FROM services
     WHERE status = 'active' AND expires_at <= @horizon AND paid_until >= expires_at + ${RENEWAL_MIN_GAP_MS}`;
  const s = {
    due: db.prepare(dueSql),
    dueOne: db.prepare(`${dueSql} AND service_id = @service_id`),
    soon: db.prepare(
      `SELECT service_id, ip, expires_at FROM services
       WHERE status = 'active' AND expires_at <= @soon AND paid_until >= expires_at + ${RENEWAL_MIN_GAP_MS}`,
    ),
    jobByKey: db.prepare("SELECT id, state, attempts, last_error FROM jobs WHERE unique_key = ?"),
  };
  const sweep = db.transaction((leadMs: number, job: (due: DueRenewal) => Parameters<SqliteJobs["enqueueSync"]>[0], serviceId?: string) => {
    const horizon = clock.now() + leadMs;
    const rows = (serviceId ? s.dueOne.all({ service_id: serviceId, horizon }) : s.due.all({ horizon })) as DueRenewal[];
    return rows.map((due) => ({ due, ...jobs.enqueueSync(job(due)) }));
  });
  return {
    dueSql,
    async sweep(leadMs, job, serviceId) {
      return sweep.immediate(leadMs, job, serviceId);
    },
    async atRisk(withinMs, keyOf) {
      const out = [];
      for (const r of s.soon.all({ soon: clock.now() + withinMs }) as (DueRenewal & { ip: string })[]) {
        // The renewal job of this term, by its unique key; tried (attempts > 0) and not done.
        const j = s.jobByKey.get(keyOf(r)) as { id: number; state: string; attempts: number; last_error: string | null } | undefined;
        if (j && j.attempts > 0 && j.state !== "succeeded") out.push({ ...r, job_id: j.id, state: j.state, last_error: j.last_error });
      }
      return out;
    },
  };
}
