import type { AuditDraft, AuditEntry, AuditFilter, AuditOps, NewAuditEntry } from "../ports/audit.js";
import type { PgDb, Tx } from "./database.js";
import { boundedEntry } from "../../vocabulary/audit.js";

/** The audit trail on PostgreSQL. `insertIn` runs inside the caller's transaction, so an entry commits with its change. */
export function pgAudit(db: PgDb) {
  const insertIn = async (t: Pick<Tx, "q" | "now">, entry: NewAuditEntry): Promise<AuditEntry> => {
    const e = boundedEntry(entry);
    const [row] = await t.q<AuditEntry>(
      `INSERT INTO audit (at, actor, action, service_id, job_id, outcome, detail) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [await t.now(), e.actor, e.action, e.service_id ?? null, e.job_id ?? null, e.outcome, e.detail ?? null],
    );
    return row!;
  };

  /** The entries of one change: each draft for `serviceId`, with `jobId` unless it names its own. */
  const forChangeIn = async (t: Tx, drafts: readonly AuditDraft[], serviceId: string | null, outcome: NewAuditEntry["outcome"], jobId: number | null) => {
    for (const d of drafts) await insertIn(t, { ...d, service_id: serviceId, job_id: d.job_id ?? jobId, outcome });
  };

  const where = (f: AuditFilter) => {
    const clauses: string[] = [];
    const values: unknown[] = [];
    const add = (column: string, op: string, value: unknown) => {
      if (value === undefined) return;
      values.push(value);
      clauses.push(`${column} ${op} $${values.length}`);
    };
    add("actor", "=", f.actor);
    add("action", "=", f.action);
    add("service_id", "=", f.serviceId);
    add("job_id", "=", f.jobId);
    add("outcome", "=", f.outcome);
    add("at", ">=", f.since);
    add("at", "<", f.until);
    return { clauses, values };
  };
  const sql = (c: string[]) => (c.length ? `WHERE ${c.join(" AND ")}` : "");

  const ops: AuditOps = {
    record: (entry) => db.tx((t) => insertIn(t, entry)),
    async list(filter = {}) {
      const { clauses, values } = where(filter);
      // One snapshot for the page and its total.
      return db.tx(async (t) => {
        await t.q("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
        const page = [...clauses];
        const pageValues = [...values];
        if (filter.beforeId !== undefined) {
          pageValues.push(filter.beforeId);
          page.push(`id < $${pageValues.length}`);
        }
        pageValues.push(filter.limit ?? 100);
        const entries = await t.q<AuditEntry>(`SELECT * FROM audit ${sql(page)} ORDER BY id DESC LIMIT $${pageValues.length}`, pageValues);
        const [count] = await t.q<{ n: number }>(`SELECT COUNT(*) AS n FROM audit ${sql(clauses)}`, values);
        return { entries, total: Number(count!.n) };
      });
    },
  };
  return Object.assign(ops, { insertIn, forChangeIn });
}

export type PgAudit = ReturnType<typeof pgAudit>;
