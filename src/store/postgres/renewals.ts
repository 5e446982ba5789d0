import { RENEWAL_MIN_GAP_MS, type DueRenewal, type RenewalOps, type UpcomingRenewal } from "../store.js";
import { nowSql, type PgDb } from "./database.js";
import type { PgJobs } from "./jobs.js";
import type { PgAudit } from "./audit.js";

/** The renewal sweep's queries on PostgreSQL; `services_due (status, expires_at)` serves them as a range scan. */
export function pgRenewals(db: PgDb, jobs: PgJobs, audit: PgAudit): RenewalOps {
  const due = `SELECT service_id, expires_at FROM services
     WHERE status = 'active' AND expires_at <= $1 AND paid_until >= expires_at + ${RENEWAL_MIN_GAP_MS}`;
  return {
    async sweep(leadMs, job, serviceId, draft) {
      return db.tx(async (t) => {
        const horizon = (await t.now()) + leadMs;
        // In service order, so that two sweeps at once insert (and wait for) the same keys in the same order.
        const rows = serviceId
          ? await t.q<DueRenewal>(`${due} AND service_id = $2`, [horizon, serviceId])
          : await t.q<DueRenewal>(`${due} ORDER BY service_id`, [horizon]);
        // The renewal's unique key (licence and term) makes a sweep on another instance, or the
        // next tick, create nothing; a term queued meanwhile comes back as `created: false`.
        const ids = await jobs.insert(t, rows.map(job));
        const out = rows.map((d, i) => ({ due: d, ...ids[i]! }));
        // An operator's sweep: each renewal it queued is theirs (one queued before is not).
        if (draft) for (const r of out) if (r.created) await audit.insertIn(t, { ...draft, service_id: r.due.service_id, job_id: r.id, outcome: "ok" });
        return out;
      });
    },
    async upcoming(horizon) {
      return db.q<UpcomingRenewal>(
        `SELECT service_id, product_id, ip, kind, type, bundle, variant, upstream_variant, months, expires_at, paid_until FROM services
         WHERE status = 'active' AND expires_at <= $1 AND paid_until >= expires_at + ${RENEWAL_MIN_GAP_MS}
         ORDER BY expires_at, service_id`,
        [horizon],
      );
    },
    async atRisk(withinMs, keyOf) {
      const soon = await db.q<DueRenewal & { ip: string }>(
        `SELECT service_id, ip, expires_at FROM services
         WHERE status = 'active' AND expires_at <= ${nowSql(1)} + $2::bigint AND paid_until >= expires_at + ${RENEWAL_MIN_GAP_MS}
         ORDER BY expires_at, service_id`,
        [db.clockParam(), withinMs],
      );
      if (soon.length === 0) return [];
      const keys = soon.map(keyOf);
      const byKey = new Map(
        (
          await db.q<{ id: number; unique_key: string; state: string; attempts: number; last_error: string | null }>(
            "SELECT id, unique_key, state, attempts, last_error FROM jobs WHERE unique_key = ANY($1::text[])",
            [keys],
          )
        ).map((j) => [j.unique_key, j]),
      );
      const out = [];
      for (const [i, r] of soon.entries()) {
        // The renewal job of this term, by its unique key; tried (attempts > 0) and not done.
        const j = byKey.get(keys[i]!);
        if (j && j.attempts > 0 && j.state !== "succeeded") out.push({ ...r, job_id: j.id, state: j.state, last_error: j.last_error });
      }
      return out;
    },
  };
}
