import { PRUNED_PAYLOAD, type PrunableKind, type RetentionOps } from "../ports/retention.js";
import { LOCKS, type PgDb } from "./database.js";

/** Job states whose row, intent and event a prune must leave alone (see RetentionOps). */
const UNFINISHED = "('queued', 'running', 'blocked', 'failed')";

/** Per kind: the rows a prune at $1 may touch (see migrations/sqlite/009_retention.sql for the indexes). */
const WHERE: Record<PrunableKind, string> = {
  jobs: `j.state IN ('succeeded', 'cancelled') AND j.run_at < $1 AND j.updated_at < $1 AND j.intent IS NULL
    AND NOT (j.kind = 'record_payment' AND j.id IN (
      SELECT r.id FROM jobs r WHERE r.service_id = j.service_id AND r.kind = 'record_payment' ORDER BY r.id DESC LIMIT 2))`,
  events: `e.outcome IS NOT NULL AND e.payload <> '${PRUNED_PAYLOAD}' AND e.received_at < $1
    AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.service_id = e.service_id AND j.event_id = e.id AND j.state IN ${UNFINISHED})`,
  mails: `m.state = 'sent' AND m.sent_at < $1
    AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = m.job_id AND j.state IN ${UNFINISHED})`,
};

/** Terminated services whose records may go (see the SQLite store's TERMINATED_WHERE): $1 is `before`. */
const TERMINATED_WHERE = `s.status = 'terminated' AND s.records_pruned_at IS NULL AND s.updated_at < $1
  AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.service_id = s.service_id AND (j.state IN ${UNFINISHED} OR j.intent IS NOT NULL))
  AND NOT EXISTS (SELECT 1 FROM events e WHERE e.service_id = s.service_id AND (e.outcome IS NULL OR e.received_at >= $1))`;

const FROM: Record<PrunableKind, { table: string; alias: string; order: string }> = {
  jobs: { table: "jobs", alias: "j", order: "j.run_at" },
  events: { table: "events", alias: "e", order: "e.received_at" },
  mails: { table: "mails", alias: "m", order: "m.sent_at" },
};

const candidates = (kind: PrunableKind) => {
  const f = FROM[kind];
  return `SELECT ${f.alias}.id FROM ${f.table} ${f.alias} WHERE ${WHERE[kind]} ORDER BY ${f.order} LIMIT $2`;
};

const BATCH: Record<PrunableKind, string> = {
  jobs: `DELETE FROM jobs WHERE id IN (${candidates("jobs")})`,
  events: `UPDATE events SET payload = '${PRUNED_PAYLOAD}' WHERE id IN (${candidates("events")})`,
  mails: `DELETE FROM mails WHERE id IN (${candidates("mails")})`,
};

/**
 * RETENTION_DAYS on PostgreSQL: each batch one statement, one short transaction. Instances that
 * prune at once touch the same rows at worst: a row gone is gone, a payload emptied stays so.
 */
export function pgRetention(db: PgDb): RetentionOps {
  return {
    async prunable(before) {
      const n = async (k: PrunableKind) =>
        Number((await db.q<{ n: number }>(`SELECT COUNT(*)::bigint AS n FROM ${FROM[k].table} ${FROM[k].alias} WHERE ${WHERE[k]}`, [before]))[0]!.n);
      return { jobs: await n("jobs"), events: await n("events"), mails: await n("mails") };
    },
    async pruneBatch(kind, before, limit) {
      return db.run(BATCH[kind], [before, limit]);
    },
    async terminatedPrunable(before) {
      return Number((await db.q<{ n: number }>(`SELECT COUNT(*)::bigint AS n FROM services s WHERE ${TERMINATED_WHERE}`, [before]))[0]!.n);
    },
    async pruneTerminatedBatch(before, limit, now) {
      return db.tx(async (t) => {
        const found = await t.q<{ service_id: string }>(`SELECT s.service_id FROM services s WHERE ${TERMINATED_WHERE} ORDER BY s.updated_at LIMIT $2`, [before, limit]);
        // The intake holds a service's lock until it commits: once this transaction holds them,
        // an event accepted meanwhile is visible to the check below, and none can come until commit.
        await t.lock(found.map((r) => ({ ns: LOCKS.service, key: r.service_id })));
        let n = 0;
        for (const { service_id: id } of found) {
          const [still] = await t.q(`SELECT 1 FROM services s WHERE s.service_id = $2 AND ${TERMINATED_WHERE} FOR UPDATE`, [before, id]);
          if (!still) continue;
          // Its events' keys first: exactly-once needs them for ever (migration 015).
          await t.run(
            `INSERT INTO webhook_keys (source, webhook_id, event_id, type)
             SELECT source, webhook_id, id, type FROM events WHERE service_id = $1 ON CONFLICT (source, webhook_id) DO NOTHING`,
            [id],
          );
          for (const table of ["history", "events", "jobs", "mails"]) await t.run(`DELETE FROM ${table} WHERE service_id = $1`, [id]);
          await t.run("UPDATE services SET records_pruned_at = $1 WHERE service_id = $2", [now, id]);
          n++;
        }
        return n;
      });
    },
    async auditPrunable(before) {
      return Number((await db.q<{ n: number }>("SELECT COUNT(*)::bigint AS n FROM audit WHERE at < $1", [before]))[0]!.n);
    },
    async pruneAuditBatch(before, limit) {
      return db.run("DELETE FROM audit WHERE id IN (SELECT id FROM audit WHERE at < $1 ORDER BY at LIMIT $2)", [before, limit]);
    },
    // The rows a prune deletes (and the old versions of the events it empties) are dead tuples
    // until a VACUUM marks their space free; autovacuum gets there in its own time, while the
    // day's new rows extend the tables. A plain VACUUM (not FULL) takes no lock writers wait for.
    async reclaim() {
      await db.q("VACUUM (ANALYZE) jobs, events, mails, history, audit");
    },
  };
}
