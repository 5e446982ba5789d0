import type { Clock } from "../../clock.js";
import type { AuditDraft } from "../ports/audit.js";
import type { NewJob } from "../ports/writes.js";
import type { RenewalCandidate, RenewalOps, UpcomingRenewal } from "../ports/renewals.js";
import type { Db } from "./database.js";
import type { SqliteJobs } from "./jobs.js";
import type { SqliteAudit } from "./audit.js";

/**
 * The renewal queries on SQLite: candidates by their term end, read as a range scan of
 * `services_due (status, expires_at)`; whether a term is due is the caller's rule's (src/intake/renewal-due.ts).
 */
export function sqliteRenewals(db: Db, clock: Clock, jobs: SqliteJobs, audit: SqliteAudit): RenewalOps & { dueSql: string } {
  const dueSql = `SELECT service_id, expires_at, status, paid_until FROM services WHERE status = 'active' AND expires_at <= @horizon`;
  const s = {
    due: db.prepare(dueSql),
    dueOne: db.prepare(`${dueSql} AND service_id = @service_id`),
    soon: db.prepare(`SELECT service_id, ip, expires_at, status, paid_until FROM services WHERE status = 'active' AND expires_at <= @soon`),
    jobByKey: db.prepare("SELECT id, state, attempts, last_error FROM jobs WHERE unique_key = ?"),
  };
  // Prepared on first use: a store opened on a database not yet at migration 016 (the migration
  // tests') must still open, and has no provider for it to name.
  let upcomingStatement: ReturnType<Db["prepare"]> | undefined;
  const upcoming = () =>
    (upcomingStatement ??= db.prepare(
      `SELECT service_id, product_id, provider, ip, kind, type, bundle, variant, upstream_variant, months, expires_at, status, paid_until FROM services
       WHERE status = 'active' AND expires_at <= @horizon
       ORDER BY expires_at, service_id`,
    ));
  const sweep = db.transaction((leadMs: number, job: (c: RenewalCandidate, now: number) => NewJob | undefined, serviceId?: string, draft?: AuditDraft) => {
    const now = clock.now();
    const horizon = now + leadMs;
    // Read through (no write may run while a statement iterates), keeping only the terms the
    // rule finds due: a book's many candidates are never all held at once.
    const found: { c: RenewalCandidate; job: NewJob }[] = [];
    for (const c of (serviceId ? s.dueOne.iterate({ service_id: serviceId, horizon }) : s.due.iterate({ horizon })) as Iterable<RenewalCandidate>) {
      const j = job(c, now);
      if (j) found.push({ c, job: j });
    }
    const out = found.map(({ c, job: j }) => ({ due: { service_id: c.service_id, expires_at: c.expires_at }, ...jobs.enqueueSync(j) }));
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
      return upcoming().all({ horizon }) as UpcomingRenewal[];
    },
    async atRisk(withinMs, keyOf) {
      const out = [];
      for (const c of s.soon.all({ soon: clock.now() + withinMs }) as (RenewalCandidate & { ip: string })[]) {
        const key = keyOf(c);
        if (key === undefined) continue;
        // The renewal job of this term, by its unique key; tried (attempts > 0) and not done.
        const j = s.jobByKey.get(key) as { id: number; state: string; attempts: number; last_error: string | null } | undefined;
        if (j && j.attempts > 0 && j.state !== "succeeded") out.push({ service_id: c.service_id, ip: c.ip, expires_at: c.expires_at, job_id: j.id, state: j.state, last_error: j.last_error });
      }
      return out;
    },
  };
}
