import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it } from "vitest";
import { manualClock, type Clock } from "../../src/clock.js";
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
    const { url } = await freshDatabase({ migrated: true });
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

export interface StoreUnderTest {
  /**
   * The running test's store. It stands in for a store opened anew for every test (it forwards to
   * that one), so helpers declared beside the tests can close over it like over a variable.
   */
  readonly store: Store;
  /** The clock the store reads, set back to `startAt` before each test. */
  readonly clock: ReturnType<typeof manualClock>;
}

export interface StoreSuiteOptions {
  /** Where the clock stands when a test begins. (Default: 2026-01-01T00:00:00Z) */
  startAt?: number;
  /** The store's attempts per job before it fails. (Default: the store's own) */
  maxAttempts?: number;
}

/**
 * The store tests' set-up, once: `describe(title)` for each store (SQLite on a temp file,
 * PostgreSQL on a fresh database; `$name` in the title names it), in which every test gets a
 * migrated store of its own on a manual clock, closed again after it. Where a store is missing
 * here (PostgreSQL not installed) its describe holds one skipped test saying why.
 */
export function describeEachStore(title: string, options: StoreSuiteOptions, body: (t: StoreUnderTest) => void): void {
  describe.each(STORE_FACTORIES)(title, (factory) => {
    if (factory.skip) {
      it.skip(`skipped: ${factory.skip}`, () => {});
      return;
    }
    const startAt = options.startAt ?? Date.UTC(2026, 0, 1);
    const clock = manualClock(startAt);
    let opened: OpenedStore | undefined;
    beforeEach(async () => {
      clock.set(startAt);
      opened = await factory.open({ clock, maxAttempts: options.maxAttempts });
    });
    afterEach(async () => {
      const o = opened;
      opened = undefined;
      await o?.close();
    });
    body({ store: currentStore(() => opened?.store), clock });
  });
}

/** A Store that forwards every read to the one `current` gives at that moment (its methods bound to it). */
function currentStore(current: () => Store | undefined): Store {
  const target = (): Store => {
    const store = current();
    if (!store) throw new Error("describeEachStore: the store is open only inside a test or its hooks");
    return store;
  };
  return new Proxy({} as Store, {
    get(_, key) {
      const store = target();
      const value: unknown = Reflect.get(store, key, store);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(store) : value;
    },
    has: (_, key) => Reflect.has(target(), key),
    ownKeys: () => Reflect.ownKeys(target()),
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(target(), key);
      return descriptor && { ...descriptor, configurable: true };
    },
  });
}
