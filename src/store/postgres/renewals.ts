import type { RenewalCandidate, RenewalOps, UpcomingRenewal } from "../ports/renewals.js";
import { nowSql, type PgDb } from "./database.js";
import type { PgJobs } from "./jobs.js";
import type { PgAudit } from "./audit.js";

/**
 * The renewal queries on PostgreSQL: candidates by their term end, read as a range scan of
 * `services_due (status, expires_at)`; whether a term is due is the caller's rule's (src/intake/renewal-due.ts).
 */
export function pgRenewals(db: PgDb, jobs: PgJobs, audit: PgAudit): RenewalOps {
  const candidates = `SELECT service_id, expires_at, status, paid_until FROM services WHERE status = 'active' AND expires_at <= $1`;
  return {
    async sweep(leadMs, job, serviceId, draft) {
      return db.tx(async (t) => {
        const now = await t.now();
        // In service order, so that two sweeps at once insert (and wait for) the same keys in the same order.
        const rows = serviceId
          ? await t.q<RenewalCandidate>(`${candidates} AND service_id = $2`, [now + leadMs, serviceId])
          : await t.q<RenewalCandidate>(`${candidates} ORDER BY service_id`, [now + leadMs]);
        const found = rows.flatMap((c) => {
          const j = job(c, now);
          return j ? [{ due: { service_id: c.service_id, expires_at: c.expires_at }, job: j }] : [];
        });
        // The renewal's unique key (licence and term) makes a sweep on another instance, or the
        // next tick, create nothing; a term queued meanwhile comes back as `created: false`.
        const ids = await jobs.insert(t, found.map((f) => f.job));
        const out = found.map((f, i) => ({ due: f.due, ...ids[i]! }));
        // An operator's sweep: each renewal it queued is theirs (one queued before is not).
        if (draft) for (const r of out) if (r.created) await audit.insertIn(t, { ...draft, service_id: r.due.service_id, job_id: r.id, outcome: "ok" });
        return out;
      });
    },
    async upcoming(horizon) {
      return db.q<UpcomingRenewal>(
        `SELECT service_id, product_id, provider, ip, kind, type, bundle, variant, upstream_variant, months, expires_at, status, paid_until FROM services
         WHERE status = 'active' AND expires_at <= $1
         ORDER BY expires_at, service_id`,
        [horizon],
      );
    },
    async atRisk(withinMs, keyOf) {
      const candidates = await db.q<RenewalCandidate & { ip: string }>(
        `SELECT service_id, ip, expires_at, status, paid_until FROM services
         WHERE status = 'active' AND expires_at <= ${nowSql(1)} + $2::bigint
         ORDER BY expires_at, service_id`,
        [db.clockParam(), withinMs],
      );
      const soon = candidates.flatMap((c) => {
        const key = keyOf(c);
        return key === undefined ? [] : [{ c, key }];
      });
      if (soon.length === 0) return [];
      const keys = soon.map((s) => s.key);
      const byKey = new Map(
        (
          await db.q<{ id: number; unique_key: string; state: string; attempts: number; last_error: string | null }>(
            "SELECT id, unique_key, state, attempts, last_error FROM jobs WHERE unique_key = ANY($1::text[])",
            [keys],
          )
        ).map((j) => [j.unique_key, j]),
      );
      const out = [];
      for (const { c, key } of soon) {
        // The renewal job of this term, by its unique key; tried (attempts > 0) and not done.
        const j = byKey.get(key);
        if (j && j.attempts > 0 && j.state !== "succeeded") out.push({ service_id: c.service_id, ip: c.ip, expires_at: c.expires_at, job_id: j.id, state: j.state, last_error: j.last_error });
      }
      return out;
    },
  };
}
