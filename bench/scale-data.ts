// The data set of `bench:scale`, written straight into a migrated database: batched INSERTs in
// big transactions (SQLite) or one unnest() INSERT per 5,000 rows (PostgreSQL), so 100,000
// services with a million history rows and a million jobs take a minute, not the hours the
// webhook path would need. The schema is the store's own: its migration runner creates it.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { systemClock } from "../src/clock.js";
import { silentLogger } from "../src/log/logger.js";
import { openPostgresStore } from "../src/store/postgres/store.js";
import { SandboxState } from "../src/sandbox/state.js";
import { openSqliteStore } from "../src/store/sqlite/store.js";
import { serviceQueueKey } from "../src/vocabulary/job-kinds.js";
import { MAIN_RESELLER_ID } from "../src/vocabulary/sandbox-identity.js";

export type StoreKind = "sqlite" | "postgres";
type Value = string | number | null;

/** A raw connection for bulk writes and the size of the database. */
export interface BulkDb {
  kind: StoreKind;
  insert(table: string, columns: readonly string[], rows: Value[][]): Promise<void>;
  /** Runs SQL written for both (no placeholders). */
  exec(sql: string): Promise<void>;
  /** Bytes the database takes: SQLite page_count × page_size; PostgreSQL pg_database_size. */
  sizeBytes(): Promise<number>;
  /** Bytes per table, its indexes included (SQLite: dbstat; PostgreSQL: pg_total_relation_size). */
  tableBytes(tables: readonly string[]): Promise<Record<string, number>>;
  /** Rows per table: whether a table grew by its rows or by the space around them. */
  rowCounts(tables: readonly string[]): Promise<Record<string, number>>;
  close(): Promise<void>;
}

/** The store's migrations applied to a new database (the store is closed again). */
export async function migrateFresh(kind: StoreKind, where: string): Promise<void> {
  if (kind === "sqlite") {
    const store = openSqliteStore(where, { clock: systemClock, maxAttempts: 5 });
    await store.migrate();
    await store.close();
  } else {
    const store = await openPostgresStore(where, { clock: "database", maxAttempts: 5, logger: silentLogger(), poolSize: 2 });
    await store.migrate();
    await store.close();
  }
}

export async function openBulk(kind: StoreKind, where: string): Promise<BulkDb> {
  if (kind === "sqlite") {
    const db = new Database(where);
    db.pragma("journal_mode = WAL");
    const statements = new Map<string, Database.Statement>();
    return {
      kind,
      async insert(table, columns, rows) {
        const sql = `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`;
        let st = statements.get(sql);
        if (!st) statements.set(sql, (st = db.prepare(sql)));
        const insert = st;
        db.transaction(() => {
          for (const r of rows) insert.run(r);
        })();
      },
      async exec(sql) {
        db.exec(sql);
      },
      async sizeBytes() {
        db.pragma("wal_checkpoint(TRUNCATE)");
        const count = db.pragma("page_count", { simple: true }) as number;
        const size = db.pragma("page_size", { simple: true }) as number;
        return count * size;
      },
      async rowCounts(tables) {
        return Object.fromEntries(tables.map((t) => [t, (db.prepare(`SELECT COUNT(*) AS n FROM ${t}`).get() as { n: number }).n]));
      },
      async tableBytes(tables) {
        const out: Record<string, number> = {};
        for (const t of tables) {
          // The table's own pages and those of its indexes (named after it, as the migrations name them).
          const r = db
            .prepare("SELECT SUM(pgsize) AS n FROM dbstat WHERE name = ? OR name IN (SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ?)")
            .get(t, t) as { n: number | null };
          out[t] = r.n ?? 0;
        }
        return out;
      },
      async close() {
        db.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: where });
  await client.connect();
  const types = new Map<string, string[]>();
  const typesOf = async (table: string, columns: readonly string[]) => {
    const key = `${table}|${columns.join(",")}`;
    let t = types.get(key);
    if (!t) {
      const r = await client.query<{ column_name: string; data_type: string }>(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = $1",
        [table],
      );
      const byName = new Map(r.rows.map((c) => [c.column_name, c.data_type === "bigint" ? "bigint" : c.data_type === "integer" ? "integer" : "text"]));
      t = columns.map((c) => byName.get(c) ?? "text");
      types.set(key, t);
    }
    return t;
  };
  return {
    kind,
    async insert(table, columns, rows) {
      const t = await typesOf(table, columns);
      // One array per column: one statement of a few parameters however many rows.
      const arrays = columns.map((_, i) => rows.map((r) => r[i] ?? null));
      await client.query(
        `INSERT INTO ${table} (${columns.join(", ")}) SELECT * FROM unnest(${t.map((type, i) => `$${i + 1}::${type}[]`).join(", ")})`,
        arrays,
      );
    },
    async exec(sql) {
      await client.query(sql);
    },
    async sizeBytes() {
      const r = await client.query<{ n: string }>("SELECT pg_database_size(current_database()) AS n");
      return Number(r.rows[0]!.n);
    },
    async tableBytes(tables) {
      const out: Record<string, number> = {};
      for (const t of tables) out[t] = Number((await client.query<{ n: string }>("SELECT pg_total_relation_size($1::regclass) AS n", [t])).rows[0]!.n);
      return out;
    },
    async rowCounts(tables) {
      const out: Record<string, number> = {};
      for (const t of tables) out[t] = Number((await client.query<{ n: string }>(`SELECT COUNT(*) AS n FROM ${t}`)).rows[0]!.n);
      return out;
    },
    async close() {
      await client.end();
    },
  };
}

const DAY = 86_400_000;

/** The i-th service's IP: 198.18.0.0/15, the benchmarking block (131,072 addresses). */
export function ipOf(i: number): string {
  const n = (198 << 24) + (18 << 16) + i;
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}
export const serviceIdOf = (i: number) => `svc-${i}`;
export const emailOf = (i: number) => `customer${i}@example.com`;
export const licenseKeyOf = (i: number) => `lb_${createHash("sha1").update(`bench-${i}`).digest("hex").slice(0, 24)}`;
/** One in ten services is terminated (its licence still upstream: an orphan for reconcile, an adoption for the plan). */
export const isTerminated = (i: number) => i % 10 === 9;

export const SERVICE_COLUMNS = [
  "service_id", "product_id", "kind", "type", "ip", "billing_cycle", "months", "status", "customer_email", "customer_name",
  "expires_at", "paid_until", "companions", "created_at", "updated_at", "order_event_id", "license_key",
] as const;
export const HISTORY_COLUMNS = ["service_id", "at", "action", "detail"] as const;
export const JOB_COLUMNS = [
  "kind", "queue_key", "service_id", "unique_key", "payload", "state", "attempts", "max_attempts", "run_at", "created_at", "updated_at", "priority",
] as const;

const JOB_KINDS_CYCLE = ["register", "mail_install", "record_payment", "renew", "record_payment", "renew", "record_payment", "renew", "suspend", "unsuspend"];
const HISTORY_ACTIONS = ["registered", "mailed install instructions", "payment recorded", "renewed", "payment recorded", "renewed", "payment recorded", "renewed", "suspended", "unsuspended"];

export interface BookSize {
  services: number;
  historyPerService: number;
  jobsPerService: number;
}

/**
 * 100,000 cloudlinux services (product 17) with their history and jobs, all finished: no job is
 * queued, so the running service under measurement has nothing to do but answer. Everything is
 * from the last 60 days (inside RETENTION_DAYS), so no prune starts while it is measured.
 */
export async function seedBook(db: BulkDb, size: BookSize, now: number, progress: (done: number) => void): Promise<void> {
  const CHUNK = 5000;
  const created = now - 60 * DAY;
  for (let from = 0; from < size.services; from += CHUNK) {
    const to = Math.min(size.services, from + CHUNK);
    const services: Value[][] = [];
    const history: Value[][] = [];
    const jobs: Value[][] = [];
    for (let i = from; i < to; i++) {
      const id = serviceIdOf(i);
      const expires = now + (20 + (i % 10)) * DAY;
      services.push([id, "17", "licence", "cloudlinux", ipOf(i), "monthly", 1, isTerminated(i) ? "terminated" : "active", emailOf(i), `Customer ${i}`, expires, expires, "[]", created, now - DAY, `evt-${i}`, licenseKeyOf(i)]);
      for (let k = 0; k < size.historyPerService; k++) {
        history.push([id, created + k * 5 * DAY + (i % 1000), HISTORY_ACTIONS[k % HISTORY_ACTIONS.length]!, `step ${k} of the bench's book for ${id}`]);
      }
      for (let k = 0; k < size.jobsPerService; k++) {
        const kind = JOB_KINDS_CYCLE[k % JOB_KINDS_CYCLE.length]!;
        const at = created + k * 5 * DAY + (i % 1000);
        jobs.push([kind, serviceQueueKey(id), id, `${kind}:${id}:${k}`, JSON.stringify({ service_id: id, step: k }), "succeeded", 1, 5, at, at, at, kind === "mail_install" ? 0 : 1]);
      }
    }
    await db.insert("services", SERVICE_COLUMNS, services);
    for (let h = 0; h < history.length; h += CHUNK * 2) await db.insert("history", HISTORY_COLUMNS, history.slice(h, h + CHUNK * 2));
    for (let j = 0; j < jobs.length; j += CHUNK * 2) await db.insert("jobs", JOB_COLUMNS, jobs.slice(j, j + CHUNK * 2));
    progress(to);
  }
  if (db.kind === "postgres") {
    // The triggers logged two million counter changes: fold them now, as a reader would, and
    // give the planner its statistics (autovacuum would, a minute later).
    await db.exec(`
      WITH moved AS (DELETE FROM job_count_changes RETURNING state, kind, n)
      INSERT INTO job_counts (state, kind, n) SELECT state, kind, SUM(n) FROM moved GROUP BY state, kind
      ON CONFLICT (state, kind) DO UPDATE SET n = job_counts.n + excluded.n;
      WITH moved AS (DELETE FROM service_count_changes RETURNING status, provider, n)
      INSERT INTO service_counts (status, provider, n) SELECT status, provider, SUM(n) FROM moved GROUP BY status, provider
      ON CONFLICT (status, provider) DO UPDATE SET n = service_counts.n + excluded.n;`);
    await db.exec("VACUUM ANALYZE");
  }
}

/** The sandbox's state file (in dir) with the book's licences: one cloudlinux licence at each service's IP. */
export function sandboxState(dir: string, services: number): string {
  const file = join(dir, "sandbox.json");
  new SandboxState({ openingBalance: 1e9, now: () => new Date(), statePath: file }).reset();
  const data = JSON.parse(readFileSync(file, "utf8")) as { licenses: unknown[] };
  const created = new Date(Date.now() - 60 * DAY).toISOString();
  const expires = new Date(Date.now() + 25 * DAY).toISOString();
  for (let i = 0; i < services; i++) {
    data.licenses.push({ account_id: MAIN_RESELLER_ID, ip: ipOf(i), type: "cloudlinux", status: "active", billingcycle: 1, created_at: created, expires_at: expires, key: `UP-${i}` });
  }
  writeFileSync(file, JSON.stringify(data));
  return file;
}
