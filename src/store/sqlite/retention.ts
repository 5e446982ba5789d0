import { PRUNED_PAYLOAD, type PrunableKind, type RetentionOps } from "../ports/retention.js";
import type { Db } from "./database.js";

/** Job states whose row, intent and event a prune must leave alone (see RetentionOps). */
const UNFINISHED = "('queued', 'running', 'blocked', 'failed')";

/** Per kind: the rows a prune at @before may touch (their ids, oldest first), and what it does to them. */
const WHERE: Record<PrunableKind, string> = {
  jobs: `j.state IN ('succeeded', 'cancelled') AND j.run_at < @before AND j.updated_at < @before AND j.intent IS NULL
    AND NOT (j.kind = 'record_payment' AND j.id IN (
      SELECT r.id FROM jobs r WHERE r.service_id = j.service_id AND r.kind = 'record_payment' ORDER BY r.id DESC LIMIT 2))`,
  // The terms of the partial index events_prunable, as written there, so the index serves the query.
  events: `e.outcome IS NOT NULL AND e.payload <> '${PRUNED_PAYLOAD}' AND e.received_at < @before
    AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.service_id = e.service_id AND j.event_id = e.id AND j.state IN ${UNFINISHED})`,
  mails: `m.state = 'sent' AND m.sent_at < @before
    AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = m.job_id AND j.state IN ${UNFINISHED})`,
};

/**
 * Terminated services whose records may go (TERMINATED_RETENTION_DAYS), read through the partial
 * index services_terminated_records: nothing of theirs is still to run or may have charged, and
 * every event of theirs was processed before @before.
 */
const TERMINATED_WHERE = `s.status = 'terminated' AND s.records_pruned_at IS NULL AND s.updated_at < @before
  AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.service_id = s.service_id AND (j.state IN ${UNFINISHED} OR j.intent IS NOT NULL))
  AND NOT EXISTS (SELECT 1 FROM events e WHERE e.service_id = s.service_id AND (e.outcome IS NULL OR e.received_at >= @before))`;

const FROM: Record<PrunableKind, { table: string; alias: string; order: string }> = {
  jobs: { table: "jobs", alias: "j", order: "j.run_at" },
  events: { table: "events", alias: "e", order: "e.received_at" },
  mails: { table: "mails", alias: "m", order: "m.sent_at" },
};

/** RETENTION_DAYS on SQLite: each batch one statement, so one short write transaction. */
export function sqliteRetention(db: Db): RetentionOps {
  const candidates = (kind: PrunableKind) => {
    const f = FROM[kind];
    return `SELECT ${f.alias}.id FROM ${f.table} ${f.alias} WHERE ${WHERE[kind]} ORDER BY ${f.order} LIMIT @limit`;
  };
  const s = {
    count: Object.fromEntries(
      (Object.keys(FROM) as PrunableKind[]).map((k) => [k, db.prepare(`SELECT COUNT(*) AS n FROM ${FROM[k].table} ${FROM[k].alias} WHERE ${WHERE[k]}`)]),
    ) as Record<PrunableKind, ReturnType<Db["prepare"]>>,
    batch: {
      jobs: db.prepare(`DELETE FROM jobs WHERE id IN (${candidates("jobs")})`),
      mails: db.prepare(`DELETE FROM mails WHERE id IN (${candidates("mails")})`),
    } as Record<Exclude<PrunableKind, "events">, ReturnType<Db["prepare"]>>,
    // Emptying a payload in place (UPDATE) leaves each old page mostly empty: SQLite rebalances a
    // b-tree page on delete, not when a row shrinks, and new events are appended at the end of
    // the table, never into those pages, so the file grew by the payloads it had pruned. Deleting
    // the rows and inserting them again, payload emptied and with the same rowid (so ids, order
    // and cursors stay as they were), lets the delete merge the emptied pages and free the rest.
    eventsToEmpty: db.prepare(`SELECT rowid AS rid, * FROM events WHERE rowid IN (SELECT e.rowid FROM events e WHERE ${WHERE.events} ORDER BY e.received_at LIMIT @limit)`),
    deleteEvent: db.prepare("DELETE FROM events WHERE rowid = ?"),
    insertEmptied: db.prepare(
      `INSERT INTO events (rowid, id, source, webhook_id, type, service_id, payload, received_at, outcome, detail)
       VALUES (@rid, @id, @source, @webhook_id, @type, @service_id, '${PRUNED_PAYLOAD}', @received_at, @outcome, @detail)`,
    ),
  };
  // Prepared on first use: a store opened on a database not yet at migration 014 (the migration
  // tests') must still open, and has no records_pruned_at for these statements to name.
  const terminatedStatements = () => ({
    count: db.prepare(`SELECT COUNT(*) AS n FROM services s WHERE ${TERMINATED_WHERE}`),
    candidates: db.prepare(`SELECT s.service_id FROM services s WHERE ${TERMINATED_WHERE} ORDER BY s.updated_at LIMIT @limit`),
    history: db.prepare("DELETE FROM history WHERE service_id = ?"),
    // Written before its events go: exactly-once needs their keys for ever (migration 015).
    keys: db.prepare(
      `INSERT INTO webhook_keys (source, webhook_id, event_id, type)
       SELECT source, webhook_id, id, type FROM events WHERE service_id = ? ON CONFLICT (source, webhook_id) DO NOTHING`,
    ),
    events: db.prepare("DELETE FROM events WHERE service_id = ?"),
    jobs: db.prepare("DELETE FROM jobs WHERE service_id = ?"),
    mails: db.prepare("DELETE FROM mails WHERE service_id = ?"),
    mark: db.prepare("UPDATE services SET records_pruned_at = ? WHERE service_id = ?"),
  });
  let t: ReturnType<typeof terminatedStatements> | undefined;
  const pruneTerminated = db.transaction((before: number, limit: number, now: number) => {
    t ??= terminatedStatements();
    const ids = (t.candidates.all({ before, limit }) as { service_id: string }[]).map((r) => r.service_id);
    for (const id of ids) {
      for (const statement of [t.history, t.keys, t.events, t.jobs, t.mails]) statement.run(id);
      t.mark.run(now, id);
    }
    return ids.length;
  });
  // Through audit_at (at): the oldest first, so a batch never reads past what it deletes.
  const audit = {
    count: db.prepare("SELECT COUNT(*) AS n FROM audit WHERE at < ?"),
    batch: db.prepare("DELETE FROM audit WHERE id IN (SELECT id FROM audit WHERE at < ? ORDER BY at LIMIT ?)"),
  };
  const emptyEvents = db.transaction((before: number, limit: number) => {
    const rows = s.eventsToEmpty.all({ before, limit }) as { rid: number }[];
    for (const r of rows) s.deleteEvent.run(r.rid);
    for (const r of rows) s.insertEmptied.run(r);
    return rows.length;
  });
  return {
    async prunable(before) {
      const n = (k: PrunableKind) => (s.count[k].get({ before }) as { n: number }).n;
      return { jobs: n("jobs"), events: n("events"), mails: n("mails") };
    },
    // Freed pages go to SQLite's freelist, which its next writes take first: nothing to do.
    async reclaim() {},
    async pruneBatch(kind, before, limit) {
      if (kind === "events") return emptyEvents.immediate(before, limit);
      return s.batch[kind].run({ before, limit }).changes;
    },
    async terminatedPrunable(before) {
      t ??= terminatedStatements();
      return (t.count.get({ before }) as { n: number }).n;
    },
    async pruneTerminatedBatch(before, limit, now) {
      return pruneTerminated.immediate(before, limit, now);
    },
    async auditPrunable(before) {
      return (audit.count.get(before) as { n: number }).n;
    },
    async pruneAuditBatch(before, limit) {
      return audit.batch.run(before, limit).changes;
    },
  };
}
