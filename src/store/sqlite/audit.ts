import type { Clock } from "../../clock.js";
import type { AuditDraft, AuditEntry, AuditFilter, AuditOps, NewAuditEntry } from "../ports/audit.js";
import type { Db } from "./database.js";
import { boundedEntry } from "../../vocabulary/audit.js";

/** The audit trail on SQLite. `insertSync` runs inside the caller's transaction, so an entry commits with its change. */
export function sqliteAudit(db: Db, clock: Clock) {
  const s = {
    insert: db.prepare(
      `INSERT INTO audit (at, actor, action, service_id, job_id, outcome, detail)
       VALUES (@at, @actor, @action, @service_id, @job_id, @outcome, @detail) RETURNING *`,
    ),
  };

  const insertSync = (entry: NewAuditEntry, at = clock.now()): AuditEntry => {
    const e = boundedEntry(entry);
    return s.insert.get({
      at,
      actor: e.actor,
      action: e.action,
      service_id: e.service_id ?? null,
      job_id: e.job_id ?? null,
      outcome: e.outcome,
      detail: e.detail ?? null,
    }) as AuditEntry;
  };

  /** The entries of one change: each draft for `serviceId`, with `jobId` unless it names its own. */
  const forChangeSync = (drafts: readonly AuditDraft[], serviceId: string | null, outcome: NewAuditEntry["outcome"], jobId: number | null, at: number) => {
    for (const d of drafts) insertSync({ ...d, service_id: serviceId, job_id: d.job_id ?? jobId, outcome }, at);
  };

  const where = (f: AuditFilter) => {
    const clauses: string[] = [];
    const params: Record<string, unknown> = {};
    const add = (sql: string, name: string, value: unknown) => {
      if (value === undefined) return;
      clauses.push(sql);
      params[name] = value;
    };
    add("actor = @actor", "actor", f.actor);
    add("action = @action", "action", f.action);
    add("service_id = @service_id", "service_id", f.serviceId);
    add("job_id = @job_id", "job_id", f.jobId);
    add("outcome = @outcome", "outcome", f.outcome);
    add("at >= @since", "since", f.since);
    add("at < @until", "until", f.until);
    return { clauses, params };
  };

  const ops: AuditOps = {
    async record(entry) {
      return insertSync(entry);
    },
    async list(filter = {}) {
      const { clauses, params } = where(filter);
      const page = filter.beforeId === undefined ? clauses : [...clauses, "id < @before_id"];
      const sql = (c: string[]) => (c.length ? `WHERE ${c.join(" AND ")}` : "");
      const entries = db
        .prepare(`SELECT * FROM audit ${sql(page)} ORDER BY id DESC LIMIT @limit`)
        .all({ ...params, ...(filter.beforeId === undefined ? {} : { before_id: filter.beforeId }), limit: filter.limit ?? 100 }) as AuditEntry[];
      const { n } = db.prepare(`SELECT COUNT(*) AS n FROM audit ${sql(clauses)}`).get(params) as { n: number };
      return { entries, total: n };
    },
  };
  return Object.assign(ops, { insertSync, forChangeSync });
}

export type SqliteAudit = ReturnType<typeof sqliteAudit>;
