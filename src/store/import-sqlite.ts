import { existsSync, statSync } from "node:fs";
import Database from "better-sqlite3";
import type { Logger } from "../log/logger.js";
import { DB_NOW_MS, type Tx } from "./postgres/database.js";
import { openPostgresStore } from "./postgres/store.js";
import { isDatabaseBusy, type Db } from "./sqlite/database.js";
import { readMigrations } from "./sqlite/migrations.js";
import { whyNotWritable } from "../config/file-problems.js";

/**
 * `license-bridge import-sqlite <file>`: an instance that outgrew one machine moves its SQLite
 * database into PostgreSQL. Every row of every table is copied in one PostgreSQL transaction,
 * so the target ends up with all of it or none of it, and only into a database no instance has
 * used yet: this never merges two bridges' states.
 */

/** The tables copied, in the order they are copied (events first: their seq follows SQLite's rowid). */
export const IMPORTED_TABLES = ["events", "services", "history", "jobs", "mails", "alerts", "audit", "webhook_keys"] as const;
export type ImportedTable = (typeof IMPORTED_TABLES)[number];

/**
 * Tables of counters (migration 008) that the target keeps itself: its triggers count every row
 * copied into jobs and services, so they are not copied (that would count each row twice).
 */
const DERIVED_TABLES: readonly string[] = ["job_counts", "service_counts"];

/** Tables whose rows do not move: console sessions (migration 012) belong to the old instance; operators log in again. */
const LEFT_BEHIND: readonly string[] = ["console_sessions"];

/** Tables a target must not hold a row of: the state of services some instance already keeps. */
const MUST_BE_EMPTY = ["services", "events", "jobs", "history", "mails", "audit", "webhook_keys"] as const;

/** How a refusal names a table's rows, where its name does not say it. */
const TABLE_WORDS: Partial<Record<(typeof MUST_BE_EMPTY)[number], string>> = { history: "history entries", audit: "audit entries", webhook_keys: "webhook keys of pruned events" };

/** Identity columns whose sequences must continue after the copied rows (events.seq stands for SQLite's rowid). */
const SEQUENCES: { table: ImportedTable; column: string }[] = [
  { table: "events", column: "seq" },
  { table: "history", column: "id" },
  { table: "jobs", column: "id" },
  { table: "mails", column: "id" },
  { table: "audit", column: "id" },
];

/** The PostgreSQL types the migrations use, as unnest() casts its array parameters to. */
const ARRAY_TYPES: Record<string, string> = { text: "text", bigint: "bigint", integer: "integer" };

/** How long to wait for the source's lock before saying it is in use. */
const SOURCE_BUSY_TIMEOUT_MS = 2_000;
/** How long to wait for the target's tables before saying they are in use. */
const TARGET_LOCK_TIMEOUT = "10s";

export interface ImportSqliteOptions {
  logger: Logger;
  /** Rows per INSERT (one array parameter per column, so the statement's size is this many rows). (Default: 5000) */
  batchRows?: number;
  /** How long to wait for another connection to let go of the source. (Default: 2000 ms) */
  busyTimeoutMs?: number;
}

export type ImportSqliteOutcome =
  /** `requeued`: jobs the old instance left running, put back in the queue. */
  | { copied: Record<ImportedTable, number>; requeued: number }
  /** Why nothing was copied, for the operator. */
  | { refused: string };

/** A reason not to copy, found before or during the copy: the transaction rolls back, the operator reads why. */
class Refusal extends Error {}

/**
 * Copies the SQLite database at `source` into the PostgreSQL database at `databaseUrl` (the
 * migrations applied first, as a starting instance would). `target` names the latter without
 * its credentials, for messages. Refuses, copying nothing, when the source is missing, at
 * another migration than the code, or open in another process (a service still running on it),
 * or when the target holds any service, event or job.
 */
export async function importSqlite(source: string, databaseUrl: string, target: string, options: ImportSqliteOptions): Promise<ImportSqliteOutcome> {
  let sqlite: Db | undefined;
  try {
    sqlite = openSource(source, options.busyTimeoutMs ?? SOURCE_BUSY_TIMEOUT_MS);
    checkSourceVersion(sqlite, source);
    const store = await openPostgresStore(databaseUrl, { logger: options.logger, clock: "database", poolSize: 1 });
    try {
      await store.migrate();
      const db = sqlite;
      return await store.db.tx((t) => copy(db, t, target, options.batchRows ?? 5_000));
    } finally {
      await store.close();
    }
  } catch (err) {
    if (err instanceof Refusal) return { refused: err.message };
    throw err;
  } finally {
    if (sqlite?.open) {
      // Nothing was written to the source: the transaction only held its lock.
      if (sqlite.inTransaction) sqlite.exec("ROLLBACK");
      sqlite.close();
    }
  }
}

/**
 * The source, locked against every other connection until it is closed: EXCLUSIVE locking mode
 * makes the first transaction fail unless no other process has the file open at all (an idle
 * service still running on it included), and BEGIN IMMEDIATE then holds SQLite's write lock, so
 * nothing can write while the rows are read. The transaction is only ever rolled back.
 */
function openSource(path: string, busyTimeoutMs: number): Db {
  if (!existsSync(path)) throw new Refusal(`no SQLite database at ${path}: give the path of the old instance's DATABASE_PATH; nothing was copied`);
  if (!statSync(path).isFile()) throw new Refusal(`${path} is not a file: give the path of the old instance's DATABASE_PATH; nothing was copied`);
  let db: Db | undefined;
  try {
    db = new Database(path, { fileMustExist: true });
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN IMMEDIATE");
    // The first read is what takes the lock in WAL mode; a file that is not SQLite fails here too.
    db.prepare("SELECT COUNT(*) FROM sqlite_master").get();
    return db;
  } catch (err) {
    if (db?.open) {
      if (db.inTransaction) db.exec("ROLLBACK");
      db.close();
    }
    if (isDatabaseBusy(err)) {
      throw new Refusal(
        `the SQLite database ${path} is in use by another process (a service still running on it?): ` +
          "stop the service on that file (and anything else that has it open), then import again; nothing was copied",
      );
    }
    throw new Refusal(`cannot read the SQLite database ${path}: ${whyNotWritable(err)}; nothing was copied`);
  }
}

/** The source must be at exactly the code's migration: its tables and columns are then the target's. */
function checkSourceVersion(db: Db, path: string): void {
  const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migrations'").get() !== undefined;
  const version = hasTable ? ((db.prepare("SELECT MAX(id) AS v FROM migrations").get() as { v: number | null }).v ?? 0) : 0;
  const code = readMigrations().at(-1)?.id ?? 0;
  if (version < code) {
    throw new Refusal(
      `the SQLite database ${path} is at migration ${version}, this code at ${code}: ` +
        `run \`DATABASE_PATH=${path} license-bridge migrate\` first (with the service on it stopped); nothing was copied`,
    );
  }
  if (version > code) {
    throw new Refusal(`the SQLite database ${path} is at migration ${version} but this code only knows up to ${code}: import with the release that wrote it; nothing was copied`);
  }
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'migrations' ORDER BY name").all() as { name: string }[]).map(
    (r) => r.name,
  );
  const unknown = tables.filter((t) => !(IMPORTED_TABLES as readonly string[]).includes(t) && !DERIVED_TABLES.includes(t) && !LEFT_BEHIND.includes(t));
  const missing = IMPORTED_TABLES.filter((t) => !tables.includes(t));
  if (unknown.length || missing.length) {
    // Only a migration this module was not taught about can get here: copying part of it would lose data.
    throw new Error(
      `the SQLite database ${path} has ${unknown.length ? `tables import-sqlite does not copy (${unknown.join(", ")})` : ""}` +
        `${unknown.length && missing.length ? " and " : ""}${missing.length ? `no ${missing.join(", ")}` : ""}; nothing was copied`,
    );
  }
}

const ident = (name: string): string => {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`unexpected column name ${JSON.stringify(name)}`);
  return `"${name}"`;
};

interface Column {
  name: string;
  type: string;
}

/** Everything written to the target, in its transaction. */
async function copy(sqlite: Db, t: Tx, target: string, batchRows: number): Promise<ImportSqliteOutcome> {
  // Instances already running on the target (they should not be) wait, and find the copy whole.
  await t.q(`SELECT set_config('lock_timeout', '${TARGET_LOCK_TIMEOUT}', true)`);
  try {
    await t.q(`LOCK TABLE ${IMPORTED_TABLES.join(", ")} IN EXCLUSIVE MODE`);
  } catch (err) {
    if ((err as { code?: unknown }).code === "55P03") {
      throw new Refusal(`the PostgreSQL database at ${target} is in use: its tables stayed locked for ${TARGET_LOCK_TIMEOUT}; nothing was copied`);
    }
    throw err;
  }
  const [held] = await t.q<Record<(typeof MUST_BE_EMPTY)[number], number>>(
    `SELECT ${MUST_BE_EMPTY.map((table) => `(SELECT COUNT(*) FROM ${table}) AS ${table}`).join(", ")}`,
  );
  const nonEmpty = MUST_BE_EMPTY.filter((table) => held![table] > 0);
  if (nonEmpty.length) {
    throw new Refusal(
      `the PostgreSQL database at ${target} is not empty (it holds ${nonEmpty.map((table) => `${held![table]} ${TABLE_WORDS[table] ?? table}`).join(", ")}): ` +
        "import-sqlite copies only into a database no instance has used; nothing was copied",
    );
  }

  const columns = await targetColumns(t);
  const copied = {} as Record<ImportedTable, number>;
  for (const table of IMPORTED_TABLES) copied[table] = await copyTable(sqlite, t, table, columns.get(table) ?? [], batchRows);

  // The old process is gone: its leases mean nothing here. The intent stays, so a job that may
  // have bought something checks the reseller before it buys again.
  const requeued = await t.run(
    `UPDATE jobs SET state = 'queued', leased_by = NULL, lease_until = NULL, updated_at = ${DB_NOW_MS} WHERE state = 'running'`,
  );

  // New rows continue after the copied ones, and after ids SQLite had handed out and no row kept
  // (AUTOINCREMENT never reuses them: a job id in an old log line names one job only).
  const highWater = new Map(
    (sqlite.prepare("SELECT name, seq FROM sqlite_sequence").all() as { name: string; seq: number }[]).map((r) => [r.name, Number(r.seq)]),
  );
  for (const { table, column } of SEQUENCES) {
    await t.q(
      `SELECT setval(pg_get_serial_sequence($1, $2), GREATEST(COALESCE(MAX(${ident(column)}), 0), $3::bigint) + 1, false) FROM ${table}`,
      [table, column, highWater.get(table) ?? 0],
    );
  }
  return { copied, requeued };
}

/** The target's columns per table, in order, with their types; events.seq is filled from SQLite's rowid. */
async function targetColumns(t: Tx): Promise<Map<string, Column[]>> {
  const rows = await t.q<{ table_name: string; column_name: string; data_type: string }>(
    `SELECT table_name, column_name, data_type FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name = ANY($1::text[]) ORDER BY table_name, ordinal_position`,
    [[...IMPORTED_TABLES]],
  );
  const out = new Map<string, Column[]>();
  for (const r of rows) {
    const type = ARRAY_TYPES[r.data_type];
    if (!type) throw new Error(`${r.table_name}.${r.column_name} is of type ${r.data_type}, which import-sqlite does not copy`);
    out.set(r.table_name, [...(out.get(r.table_name) ?? []), { name: r.column_name, type }]);
  }
  return out;
}

/**
 * Copies one table in rowid order (ids kept), `batchRows` rows per INSERT: one array parameter
 * per column, unnested, so a statement's parameters do not grow with its rows.
 */
async function copyTable(sqlite: Db, t: Tx, table: ImportedTable, columns: Column[], batchRows: number): Promise<number> {
  const sourceColumns = (sqlite.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[]).map((r) => r.name);
  // events.seq is the target's stand-in for SQLite's rowid, and is given the rowid's value.
  const fromRowid = (c: Column) => table === "events" && c.name === "seq";
  const want = columns.filter((c) => !fromRowid(c)).map((c) => c.name);
  if (columns.length === 0 || want.length !== sourceColumns.length || want.some((c) => !sourceColumns.includes(c))) {
    throw new Error(
      `the columns of ${table} differ: SQLite has ${sourceColumns.join(", ")}; PostgreSQL has ${want.join(", ")} (same migration, so this is a bug); nothing was copied`,
    );
  }
  // webhook_keys has no rowid (migration 015): its key is its order.
  const order = table === "webhook_keys" ? "source, webhook_id" : "rowid";
  const select = sqlite.prepare(`SELECT ${columns.map((c) => (fromRowid(c) ? "rowid" : ident(c.name))).join(", ")} FROM ${table} ORDER BY ${order}`).raw(true);
  const insert =
    `INSERT INTO ${table} (${columns.map((c) => ident(c.name)).join(", ")})` +
    // seq is GENERATED ALWAYS: a value of our own needs saying so.
    `${table === "events" ? " OVERRIDING SYSTEM VALUE" : ""}` +
    ` SELECT * FROM unnest(${columns.map((c, i) => `$${i + 1}::${c.type}[]`).join(", ")})` +
    // An open alert episode the target already has (an instance started on it and raised it) is kept.
    `${table === "alerts" ? " ON CONFLICT (key) DO NOTHING" : ""}`;

  let copied = 0;
  let batch: unknown[][] = columns.map(() => []);
  let size = 0;
  const flush = async () => {
    if (size === 0) return;
    copied += await t.run(insert, batch);
    batch = columns.map(() => []);
    size = 0;
  };
  for (const row of select.iterate() as IterableIterator<unknown[]>) {
    row.forEach((v, i) => batch[i]!.push(v));
    if (++size >= batchRows) await flush();
  }
  await flush();
  return copied;
}
