import { systemClock, type Clock } from "../clock.js";
import type { Config } from "../config/load.js";
import type { Logger } from "../log/logger.js";
import { openSqliteStore } from "./sqlite/store.js";
import type { ImportSqliteOptions, ImportSqliteOutcome } from "./import-sqlite.js";
import type { Store } from "./ports/store.js";

/** How long a statement of the running service waits for another process's SQLite write lock. */
export const SERVING_BUSY_TIMEOUT_MS = 100;

export interface OpenStoreOptions {
  clock: Clock;
  /** Required to serve, migrate or use PostgreSQL; the CLI's SQLite reads log nothing (and load no logger). */
  logger?: Logger;
  /**
   * A running service: migrations applied, a short wait for another process's lock (the wait
   * blocks the event loop), and the SQLite file watched. (Default: false: the CLI reads and writes a little)
   */
  serving?: boolean;
  /** Apply pending migrations. (Default: true; the CLI's reads leave that to `migrate` and check instead) */
  migrate?: boolean;
}

/**
 * Where the data is, for people and logs: the SQLite file, or the PostgreSQL URL without the
 * credentials (user, password, and the query string, which may carry a password too).
 */
export function databaseLocation(config: Pick<Config, "DATABASE_PATH" | "DATABASE_URL">): string {
  if (!config.DATABASE_URL) return config.DATABASE_PATH;
  try {
    const u = new URL(config.DATABASE_URL);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return "(DATABASE_URL)";
  }
}

/**
 * The store the configuration names: PostgreSQL at DATABASE_URL, or SQLite at DATABASE_PATH.
 * Migrations are applied (once, whichever instance starts first).
 */
export async function openStore(
  config: Pick<Config, "DATABASE_PATH" | "DATABASE_URL" | "JOB_MAX_ATTEMPTS"> & Partial<Pick<Config, "WORKER_CONCURRENCY">>,
  options: OpenStoreOptions,
): Promise<Store> {
  const { clock } = options;
  const logger = () => {
    if (!options.logger) throw new Error("openStore: a logger is needed to serve, migrate or use PostgreSQL");
    return options.logger;
  };
  if (config.DATABASE_URL) {
    const { openPostgresStore } = await import("./postgres/store.js");
    // The machine's clock becomes the database's: instances on several machines then agree on
    // when a lease has run out. A clock a test moves is kept, and passed to every statement.
    const storeClock = clock === systemClock ? "database" : clock;
    // One connection per job slot, and some for intake and the API: a job never waits for one.
    const poolSize = Math.max(10, (config.WORKER_CONCURRENCY ?? 0) + 6);
    const store = await openPostgresStore(config.DATABASE_URL, { clock: storeClock, maxAttempts: config.JOB_MAX_ATTEMPTS, logger: logger(), poolSize });
    if (options.migrate !== false) await migrated(store, logger());
    return store;
  }
  const store = openSqliteStore(config.DATABASE_PATH, { clock, maxAttempts: config.JOB_MAX_ATTEMPTS });
  if (options.migrate !== false) await migrated(store, logger());
  // From here on a lock held by another process (a backup, a sqlite3 shell) must not stall the
  // event loop: better-sqlite3 waits for it synchronously. Requests answer 503 and jobs retry
  // instead; start-up above may wait the default 5 s, there is nothing to serve yet.
  if (options.serving) {
    store.setBusyTimeout(SERVING_BUSY_TIMEOUT_MS);
    // An `rm` or `mv` over DATABASE_PATH leaves this connection writing into a file nobody will
    // read again: from then on, no webhook is accepted, no job claimed, and /readyz says why.
    store.watchFile(config.DATABASE_PATH, (reason) => logger().error({ path: config.DATABASE_PATH, reason }, `database file lost: ${reason}`));
  }
  return store;
}

/** Applies pending migrations; a store that cannot be migrated is closed before the error goes on. */
async function migrated(store: Store, logger: Logger): Promise<void> {
  try {
    const applied = await store.migrate();
    if (applied.length) logger.info({ migrations: applied.map((m) => `${m.id}_${m.name}`) }, "database migrated");
  } catch (err) {
    await store.close();
    throw err;
  }
}

/**
 * `license-bridge import-sqlite`: copies the SQLite database at `source` into the empty
 * PostgreSQL database at `config.DATABASE_URL` (migrated first), all or nothing; see
 * ./import-sqlite.ts. `{ refused }` says why nothing was copied.
 */
export async function importSqliteDatabase(
  source: string,
  config: Pick<Config, "DATABASE_PATH" | "DATABASE_URL">,
  options: ImportSqliteOptions,
): Promise<ImportSqliteOutcome> {
  if (!config.DATABASE_URL) throw new Error("importSqliteDatabase: DATABASE_URL is not set");
  const { importSqlite } = await import("./import-sqlite.js");
  return importSqlite(source, config.DATABASE_URL, databaseLocation(config), options);
}
