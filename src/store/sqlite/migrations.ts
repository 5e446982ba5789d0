import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DatabaseNewerThanCodeError } from "../store.js";
import type { Db } from "./database.js";

export { DatabaseNewerThanCodeError };

/** migrations/<dialect>/NNN_name.sql: the same numbers and names in each dialect. */
export const MIGRATIONS_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../../migrations");
export const MIGRATIONS_DIR = resolve(MIGRATIONS_ROOT, "sqlite");

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

/** Files named `NNN_name.sql`, in number order. */
export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .map((file) => /^(\d+)_([\w-]+)\.sql$/.exec(file))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ id: Number(m[1]), name: m[2]!, sql: readFileSync(join(dir, m[0]), "utf8") }))
    .sort((a, b) => a.id - b.id);
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

export interface MigrationStatus {
  databaseVersion: number;
  codeVersion: number;
  pending: Migration[];
}

export function migrationStatus(db: Db, migrations = readMigrations()): MigrationStatus {
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
