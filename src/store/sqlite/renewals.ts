import type { Clock } from "../../clock.js";
import { RENEWAL_MIN_GAP_MS, type AuditDraft, type DueRenewal, type RenewalOps, type UpcomingRenewal } from "../store.js";
import type { Db } from "./database.js";
import type { SqliteJobs } from "./jobs.js";
import type { SqliteAudit } from "./audit.js";

/** The renewal sweep's queries on SQLite; `services_due (status, expires_at)` serves them as a range scan. */
export function sqliteRenewals(db: Db, clock: Clock, jobs: SqliteJobs, audit: SqliteAudit): RenewalOps & { dueSql: string } {
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
    upcoming: db.prepare(
      `SELECT service_id, product_id, ip, kind, type, bundle, variant, upstream_variant, months, expires_at, paid_until FROM services
       WHERE status = 'active' AND expires_at <= @horizon AND paid_until >= expires_at + ${RENEWAL_MIN_GAP_MS}
       ORDER BY expires_at, service_id`,
    ),
  };
  const sweep = db.transaction((leadMs: number, job: (due: DueRenewal) => Parameters<SqliteJobs["enqueueSync"]>[0], serviceId?: string, draft?: AuditDraft) => {
    const now = clock.now();
    const horizon = now + leadMs;
    const rows = (serviceId ? s.dueOne.all({ service_id: serviceId, horizon }) : s.due.all({ horizon })) as DueRenewal[];
    const out = rows.map((due) => ({ due, ...jobs.enqueueSync(job(due)) }));
    // An operator's sweep: each renewal it queued is theirs (one queued before is not).
    if (draft) for (const r of out) if (r.created) audit.insertSync({ ...draft, service_id: r.due.service_id, job_id: r.id, outcome: "ok" }, now);
    return out;
  });
  return {
    dueSql,
    async sweep(leadMs, job, serviceId, draft) {
      return sweep.immediate(leadMs, job, serviceId, draft);
    },
    async upcoming(horizon) {
      return s.upcoming.all({ horizon }) as UpcomingRenewal[];
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
