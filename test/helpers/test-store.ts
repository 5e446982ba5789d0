import { systemClock } from "../../src/clock.js";
import { loadConfig } from "../../src/config/load.js";
import { silentLogger } from "../../src/log/logger.js";
import { databaseLocation, openStore } from "../../src/store/open.js";
import { readMigrations } from "../../src/store/sqlite/migrations.js";
import type { Store } from "../../src/store/store.js";
import { freshDatabase, openSession } from "./postgres.js";
import { migrateBeyondCode, readStore } from "./sqlite.js";

/**
 * Which store the bridges of this test run use. The `postgres` project of vitest.config.ts sets
 * LB_TEST_STORE=postgres and runs the end-to-end suites again, each bridge on a fresh database
 * of the run's scratch cluster; otherwise SQLite files in temp folders.
 */
export const TEST_STORE: "sqlite" | "postgres" = process.env.LB_TEST_STORE === "postgres" ? "postgres" : "sqlite";

/**
 * What a bridge's environment needs for its database beyond DATABASE_PATH: nothing for SQLite,
 * `DATABASE_URL` of a new database for PostgreSQL: empty, or with `migrated` already at the
 * code's migration (see freshDatabase). Pass it to every process (service, CLI, a restarted
 * instance) that must see the same data.
 */
export async function databaseEnv(options: { migrated?: boolean } = {}): Promise<Record<string, string>> {
  return TEST_STORE === "postgres" ? { DATABASE_URL: (await freshDatabase(options)).url } : {};
}

/**
 * Runs `read` on the store a bridge started with `env` used (after it stopped, or beside it),
 * then closes it: a read-only SQLite file, or a connection to the PostgreSQL database.
 */
export async function readStoreOf<T>(env: Record<string, string>, read: (store: Store) => Promise<T>): Promise<T> {
  if (!env.DATABASE_URL) return readStore(env.DATABASE_PATH!, read);
  const config = loadConfig({ env, cwd: process.cwd() });
  const store = await openStore(config, { clock: systemClock, logger: silentLogger(), migrate: false });
  try {
    return await read(store);
  } finally {
    await store.close();
  }
}

/** Where the CLI says the data is: the SQLite file, or the database URL without its credentials. */
export function databaseLabel(env: Record<string, string>): string {
  return databaseLocation({ DATABASE_URL: env.DATABASE_URL, DATABASE_PATH: env.DATABASE_PATH! });
}

/**
 * A newer release migrates the database: one migration beyond the code's, recorded and changing
 * nothing else. Returns the version it is at now.
 */
export async function migrateBeyondCodeOf(env: Record<string, string>): Promise<number> {
  if (!env.DATABASE_URL) return migrateBeyondCode(env.DATABASE_PATH!);
  const next = readMigrations().at(-1)!.id + 1;
  const session = await openSession(env.DATABASE_URL);
  try {
    await session.recordMigration(next, "from_the_future");
  } finally {
    await session.close();
  }
  return next;
}
