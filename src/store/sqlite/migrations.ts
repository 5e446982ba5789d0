import { resolve } from "node:path";
import { MIGRATIONS_ROOT, readMigrationFiles, type Migration } from "../migration-files.js";
import { DatabaseNewerThanCodeError } from "../database-errors.js";
import type { MigrationStatus } from "../ports/store.js";
import type { Db } from "./database.js";

export { DatabaseNewerThanCodeError, MIGRATIONS_ROOT, type Migration };

export const MIGRATIONS_DIR = resolve(MIGRATIONS_ROOT, "sqlite");

/** Files named `NNN_name.sql`, in number order. */
export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readMigrationFiles(dir);
}

function ensureMigrationsTable(db: Db): void {
  db.exec(
    "CREATE TABLE IF NOT EXISTS migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
  );
}

export function currentVersion(db: Db): number {
  ensureMigrationsTable(db);
  const row = db.prepare("SELECT MAX(id) AS v FROM migrations").get() as { v: number | null };
  return row.v ?? 0;
}

export function migrationStatus(db: Db, migrations = readMigrations()): MigrationStatus & { pending: Migration[] } {
  const databaseVersion = currentVersion(db);
  const codeVersion = migrations.at(-1)?.id ?? 0;
  return { databaseVersion, codeVersion, pending: migrations.filter((m) => m.id > databaseVersion) };
}

/**
 * Applies pending migrations, each in its own transaction with its id recorded first
 * (as graphile-worker does), so a crash leaves the database at a whole migration.
 * Throws DatabaseNewerThanCodeError rather than touch a database from the future.
 */
export function migrate(db: Db, migrations = readMigrations()): Migration[] {
  const status = migrationStatus(db, migrations);
  if (status.databaseVersion > status.codeVersion) {
    throw new DatabaseNewerThanCodeError(status.databaseVersion, status.codeVersion);
  }
  const record = db.prepare("INSERT INTO migrations (id, name, applied_at) VALUES (?, ?, ?)");
  for (const m of status.pending) {
    db.transaction(() => {
      record.run(m.id, m.name, new Date().toISOString());
      db.exec(m.sql);
    }).immediate();
  }
  return status.pending;
}
