import { systemClock } from "../../src/clock.js";
import { openDatabase } from "../../src/store/sqlite/database.js";
import { migrate, readMigrations } from "../../src/store/sqlite/migrations.js";
import { openSqliteStore, type SqliteStore } from "../../src/store/sqlite/store.js";

/**
 * What tests of the SQLite store need beside the Store's operations: another process's hold on
 * the file (a backup, an operator's sqlite3 shell, a newer release), and a read of the file a
 * stopped bridge left behind. SQLite-specific on purpose; this is the one file of test/ that
 * sends SQL itself (to take and give back the write lock, to read the catalogue), see
 * test/store/no-sql-outside-store.test.ts.
 */

export interface WriteLock {
  readonly held: boolean;
  /** Rolls back and closes the connection; safe to call twice. */
  release(): void;
}

/** Another connection to the file with an immediate transaction open: it holds the write lock until released. */
export function holdWriteLock(path: string): WriteLock {
  const db = openDatabase(path);
  try {
    db.exec("BEGIN IMMEDIATE");
  } catch (err) {
    db.close();
    throw err;
  }
  let held = true;
  return {
    get held() {
      return held;
    },
    release() {
      if (!held) return;
      held = false;
      try {
        if (db.inTransaction) db.exec("ROLLBACK");
      } finally {
        db.close();
      }
    },
  };
}

/**
 * A newer release migrates the file: one migration beyond the code's (it changes nothing but
 * the recorded version). Returns the version the file is at now.
 */
export function migrateBeyondCode(path: string): number {
  const known = readMigrations();
  const next = known.at(-1)!.id + 1;
  const db = openDatabase(path);
  try {
    migrate(db, [...known, { id: next, name: "from_the_future", sql: "" }]);
  } finally {
    db.close();
  }
  return next;
}

/**
 * Rows written into `table` of the file at `path` as an older release wrote them, for
 * test/migrations.test.ts: a database at an earlier migration has columns the Store's
 * statements of today no longer match (or lacks some they name), so no Store operation can.
 */
export function insertRows(path: string, table: string, rows: readonly Record<string, string | number | null>[]): void {
  const db = openDatabase(path);
  try {
    for (const row of rows) {
      const columns = Object.keys(row);
      db.prepare(`INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map((c) => `@${c}`).join(", ")})`).run(row);
    }
  } finally {
    db.close();
  }
}

/** What SQLite's catalogue holds about one table: the table, its indexes and triggers (name and SQL), and its AUTOINCREMENT sequence. */
export interface TableSchema {
  objects: { type: string; name: string; sql: string | null }[];
  sequence: number | null;
}

/**
 * The catalogue's entries for `table` in the file at `path` (read-only), for a migration test
 * that rebuilds a table: no Store operation offers the schema itself.
 */
export function tableSchema(path: string, table: string): TableSchema {
  const db = openDatabase(path, { readonly: true });
  try {
    const objects = db.prepare("SELECT type, name, sql FROM sqlite_master WHERE tbl_name = ? ORDER BY type, name").all(table) as TableSchema["objects"];
    const row = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = ?").get(table) as { seq: number } | undefined;
    return { objects, sequence: row?.seq ?? null };
  } finally {
    db.close();
  }
}

/** Runs `read` on a read-only store of the file at `path` (a bridge that stopped left it), then closes it. */
export async function readStore<T>(path: string, read: (store: SqliteStore) => Promise<T>): Promise<T> {
  const store = openSqliteStore(path, { clock: systemClock, readonly: true });
  try {
    return await read(store);
  } finally {
    await store.close();
  }
}

/** The file's size in pages as SQLite counts them (free pages included), for test/store/prune-space.test.ts: what the prune gives back. */
export function fileBytes(path: string): number {
  const db = openDatabase(path);
  try {
    return (db.pragma("page_count", { simple: true }) as number) * (db.pragma("page_size", { simple: true }) as number);
  } finally {
    db.close();
  }
}

export interface StatementCount {
  /** How many statements whose SQL matches `sql` this thread has run since the count began. */
  of(sql: RegExp): number;
  /** Puts the driver's methods back. */
  stop(): void;
}

/**
 * Counts the statements this thread runs, by their SQL: every run, get, all and iterate of any
 * better-sqlite3 statement of this thread (as bench/sql-count.mjs does). A worker thread loads
 * its own copy of the driver, so what a worker runs is not counted: for the test that the
 * export reads nothing on the service's event loop.
 */
export function countStatements(): StatementCount {
  const probe = openDatabase(":memory:");
  const proto = Object.getPrototypeOf(probe.prepare("SELECT 1")) as Record<string, (...args: unknown[]) => unknown>;
  probe.close();
  const run: string[] = [];
  const methods = ["run", "get", "all", "iterate"] as const;
  const originals = methods.map((m) => proto[m]!);
  methods.forEach((m, i) => {
    const original = originals[i]!;
    proto[m] = function (this: { source: string }, ...args: unknown[]) {
      run.push(this.source);
      return original.apply(this, args);
    };
  });
  return {
    of: (sql) => run.filter((s) => sql.test(s)).length,
    stop: () => methods.forEach((m, i) => (proto[m] = originals[i]!)),
  };
}

/**
 * Rows the store's own connection has inserted, updated or deleted since it opened (SQLite's
 * total_changes()), for test/e2e/database-file.test.ts: that a store which lost its file wrote
 * nothing more into the file it still holds open, which no Store operation could show.
 */
export function rowsChangedBy(store: SqliteStore): number {
  return (store.db.prepare("SELECT total_changes() AS n").get() as { n: number }).n;
}
