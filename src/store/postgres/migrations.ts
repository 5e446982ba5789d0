import { resolve } from "node:path";
import { MIGRATIONS_ROOT, readMigrationFiles, type Migration } from "../migration-files.js";
import { DatabaseNewerThanCodeError } from "../database-errors.js";
import type { MigrationStatus } from "../ports/store.js";
import type { PgDb } from "./database.js";

export const PG_MIGRATIONS_DIR = resolve(MIGRATIONS_ROOT, "postgres");

/** migrations/postgres/NNN_name.sql: the numbers and names of migrations/sqlite, in PostgreSQL. */
export function readPgMigrations(dir = PG_MIGRATIONS_DIR): Migration[] {
  return readMigrationFiles(dir);
}

/**
 * The session-level advisory lock the migrator holds (the one-bigint key space, apart from the
 * stores' two-int4 locks): the first instance to start migrates, the others wait and find
 * nothing left to do.
 */
const MIGRATION_LOCK = 0x4c42_6d69_6772; // "LBmigr"

const CREATE_TABLE = "CREATE TABLE IF NOT EXISTS migrations (id INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)";

async function version(db: Pick<PgDb, "q">): Promise<number> {
  const [exists] = await db.q<{ t: string | null }>("SELECT to_regclass('migrations')::text AS t");
  if (!exists?.t) return 0;
  const [row] = await db.q<{ v: number | null }>("SELECT MAX(id) AS v FROM migrations");
  return row?.v ?? 0;
}

export async function pgMigrationStatus(db: Pick<PgDb, "q">, migrations = readPgMigrations()): Promise<MigrationStatus & { pending: Migration[] }> {
  const databaseVersion = await version(db);
  const codeVersion = migrations.at(-1)?.id ?? 0;
  return { databaseVersion, codeVersion, pending: migrations.filter((m) => m.id > databaseVersion) };
}

/**
 * Applies pending migrations under the migration lock, each in its own transaction with its id
 * recorded first (as graphile-worker does), so a crash leaves the database at a whole migration
 * and a second instance never applies one again. Throws DatabaseNewerThanCodeError rather than
 * touch a database from the future.
 */
export async function pgMigrate(db: PgDb, migrations = readPgMigrations()): Promise<Migration[]> {
  const client = await db.pool.connect();
  let broken: Error | undefined;
  const onError = (err: Error) => (broken = err);
  client.on("error", onError);
  const q = async <R>(text: string, values?: unknown[]) => (await client.query(text, values)).rows as R[];
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
    try {
      // Under the lock: two CREATE TABLE IF NOT EXISTS at once may both try to create it.
      await client.query(CREATE_TABLE);
      const status = await pgMigrationStatus({ q }, migrations);
      if (status.databaseVersion > status.codeVersion) throw new DatabaseNewerThanCodeError(status.databaseVersion, status.codeVersion);
      for (const m of status.pending) {
        await client.query("BEGIN");
        try {
          await client.query("INSERT INTO migrations (id, name, applied_at) VALUES ($1, $2, $3)", [m.id, m.name, new Date().toISOString()]);
          // No parameters: the simple protocol, which runs every statement of the file.
          await client.query(m.sql);
          await client.query("COMMIT");
        } catch (err) {
          await client.query("ROLLBACK").catch(() => undefined);
          throw err;
        }
      }
      return status.pending;
    } finally {
      // If this fails the connection is gone, and the session's lock with it.
      await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch((err: Error) => (broken = err));
    }
  } catch (err) {
    broken ??= err as Error;
    throw err;
  } finally {
    client.removeListener("error", onError);
    // Dropped rather than reused after an error: a session lock must not stay behind in the pool.
    client.release(broken);
  }
}
