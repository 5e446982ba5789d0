import type { Clock } from "../../clock.js";
import type { Store } from "../ports/store.js";
import { sqliteAlerts } from "./alerts.js";
import { sqliteAudit } from "./audit.js";
import { sqliteConsoleReads, sqliteSessions } from "./console.js";
import { isDatabaseBusy, openDatabase, type Db } from "./database.js";
import { sqliteEvents } from "./events.js";
import { watchDatabaseFile } from "./database-file.js";
import { refuseWrites } from "./write-guard.js";
import { StoreUnavailableError } from "../unavailable.js";
import { createGroupCommit } from "./group-commit.js";
import { walSync } from "./wal-sync.js";
import { sqliteJobs } from "./jobs.js";
import { sqliteListings } from "./listings.js";
import { sqliteMails } from "./mails.js";
import { migrate, migrationStatus, readMigrations } from "./migrations.js";
import { sqliteRenewals } from "./renewals.js";
import { sqliteRetention } from "./retention.js";
import { sqliteAdoption } from "./adoption.js";
import { sqliteServices } from "./services.js";

export interface SqliteStoreOptions {
  clock: Clock;
  /** Attempts before a job is failed. (Default: 20) */
  maxAttempts?: number;
  readonly?: boolean;
}

/** A Store on one SQLite file: one connection, one writer, durable writes grouped into shared fsyncs. */
export type SqliteStore = Store & {
  readonly db: Db;
  /** How long a statement waits for another process's write lock (the wait blocks the event loop). */
  setBusyTimeout(ms: number): void;
  /** Watches that the file at `path` stays the one opened (a running service does, once migrated). */
  watchFile(path: string, onLost: (reason: string) => void): void;
  /** SQLite's plan for the due query (EXPLAIN QUERY PLAN), for the index test: one line per step. */
  dueQueryPlan(): string[];
};

export function openSqliteStore(path: string, options: SqliteStoreOptions): SqliteStore {
  const db = openDatabase(path, { readonly: options.readonly });
  return sqliteStore(db, options);
}

export function sqliteStore(db: Db, options: SqliteStoreOptions): SqliteStore {
  const { clock } = options;
  let file: ReturnType<typeof watchDatabaseFile> | undefined;
  // Once the file is lost (watchFile), the connection would write into a file nobody reads again:
  // every write refuses instead, before it runs, so nothing is accepted that a restart would forget.
  refuseWrites(db, () => {
    const lost = file?.check();
    return lost === undefined ? undefined : new StoreUnavailableError(lost);
  });
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const l of listeners) l();
  };
  // One group commit for every durable write: accepted events, charging intents, jobs' endings
  // and mails about to be sent share transactions and fsyncs.
  const wal = walSync(db);
  const group = createGroupCommit(db, wal.sync);
  let parts: ReturnType<typeof build> | undefined;
  const build = () => {
    // The services are built after the jobs they enqueue into; a stopped job's record reaches them late-bound.
    const listings = sqliteListings(db);
    const audit = sqliteAudit(db, clock);
    const jobs = sqliteJobs(db, clock, group, notify, options.maxAttempts ?? 20, () => services, listings, audit);
    const services = sqliteServices(db, clock, jobs, listings, audit);
    return {
      planned: { ...listings.planned, ...jobs.planned },
      audit,
      jobs,
      services,
      events: sqliteEvents(db, clock, group, services, jobs, audit),
      mails: sqliteMails(db, clock, group),
      alerts: sqliteAlerts(db, clock, jobs),
      renewals: sqliteRenewals(db, clock, jobs, audit),
      retention: sqliteRetention(db),
      adoption: sqliteAdoption(db, clock, services, jobs, audit),
      sessions: sqliteSessions(db),
      consoleReads: sqliteConsoleReads(db),
    };
  };
  // Statements are prepared against the schema, so only once the migrations have run.
  const ready = () => (parts ??= build());
  const count = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

  return {
    dialect: "sqlite",
    db,
    get events() {
      return ready().events;
    },
    get services() {
      return ready().services;
    },
    get jobs() {
      return ready().jobs;
    },
    get mails() {
      return ready().mails;
    },
    get alerts() {
      return ready().alerts;
    },
    get renewals() {
      return ready().renewals;
    },
    get retention() {
      return ready().retention;
    },
    get adoption() {
      return ready().adoption;
    },
    async explain(read) {
      const [sql, params] = ready().planned[read]();
      return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as { detail: string }[]).map((p) => p.detail);
    },
    get audit() {
      return ready().audit;
    },
    get sessions() {
      return ready().sessions;
    },
    get consoleReads() {
      return ready().consoleReads;
    },
    dueQueryPlan() {
      const plan = db.prepare(`EXPLAIN QUERY PLAN ${ready().renewals.dueSql}`).all({ horizon: 0 }) as { detail: string }[];
      return plan.map((p) => p.detail);
    },
    health: {
      // Take the write lock and change a row, then roll back.
      async writable() {
        if (!db.open) return "the database is closed";
        try {
          db.exec("BEGIN IMMEDIATE");
          try {
            db.prepare("UPDATE migrations SET name = name WHERE id = (SELECT MAX(id) FROM migrations)").run();
          } finally {
            db.exec("ROLLBACK");
          }
          return undefined;
        } catch (err) {
          return `not writable: ${(err as Error).message}${isDatabaseBusy(err) ? " (another process holds the write lock)" : ""}`;
        }
      },
    },
    async migrate() {
      return migrate(db).map(({ id, name }) => ({ id, name }));
    },
    async migrationStatus() {
      const s = migrationStatus(db, readMigrations());
      return { databaseVersion: s.databaseVersion, codeVersion: s.codeVersion, pending: s.pending.map(({ id, name }) => ({ id, name })) };
    },
    async gauges() {
      // Synchronous reads of a few rows each, with no round trip to save by joining them.
      const { jobs, alerts } = ready();
      return { jobs: await jobs.counts(), queue: await jobs.queue(), openAlerts: (await alerts.open()).length };
    },
    async counts() {
      return { events: count("events"), services: count("services"), jobs: count("jobs"), history: count("history"), mails: count("mails") };
    },
    onJobReady(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    setBusyTimeout(ms) {
      db.pragma(`busy_timeout = ${ms}`);
    },
    watchFile(path, onLost) {
      file ??= watchDatabaseFile(path, { onLost });
    },
    isBusy: isDatabaseBusy,
    lost: () => file?.check(),
    async close() {
      file?.stop();
      if (db.open) db.close();
      await wal.close();
    },
  };
}
