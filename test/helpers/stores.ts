import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Clock } from "../../src/clock.js";
import { silentLogger } from "../../src/log/logger.js";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/store.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import type { Store } from "../../src/store/store.js";
import { freshDatabase, postgresSkipReason } from "./postgres.js";

/** A migrated store on a fresh database, and how to close it and remove what it made. */
export interface OpenedStore {
  store: Store;
  /** PostgreSQL: the database's URL, for more instances on it. */
  url?: string;
  close(): Promise<void>;
}

export interface StoreFactory {
  name: "sqlite" | "postgres";
  /** Why this store's tests do not run here (PostgreSQL missing), or undefined. */
  skip: string | undefined;
  open(options: { clock: Clock | "database"; maxAttempts?: number }): Promise<OpenedStore>;
}

/** SQLite on a temp file. ("database" means the system clock: SQLite has no clock of its own.) */
export const sqliteFactory: StoreFactory = {
  name: "sqlite",
  skip: undefined,
  async open({ clock, maxAttempts }) {
    const dir = mkdtempSync(join(tmpdir(), "lb-store-"));
    const store = openSqliteStore(join(dir, "bridge.db"), { clock: clock === "database" ? { now: () => Date.now() } : clock, maxAttempts });
    await store.migrate();
    return {
      store,
      async close() {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

/** PostgreSQL on a new database of the run's scratch cluster. */
export const postgresFactory: StoreFactory = {
  name: "postgres",
  get skip() {
    return postgresSkipReason();
  },
  async open({ clock, maxAttempts }) {
    const { url } = await freshDatabase();
    const store = await openPostgresStore(url, { clock, maxAttempts, logger: silentLogger() });
    await store.migrate();
    return { store, url, close: () => store.close() };
  },
};

/** One more instance (its own pool) on the PostgreSQL database at `url`. */
export function anotherInstance(url: string, options: { clock: Clock | "database"; maxAttempts?: number }): Promise<PostgresStore> {
  return openPostgresStore(url, { ...options, logger: silentLogger() });
}

export const STORE_FACTORIES: readonly StoreFactory[] = [sqliteFactory, postgresFactory];
