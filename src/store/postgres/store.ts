import type { Clock } from "../../clock.js";
import type { Logger } from "../../log/logger.js";
import type { Store } from "../ports/store.js";
import { pgAlerts } from "./alerts.js";
import { pgAudit } from "./audit.js";
import { pgConsoleReads, pgSessions } from "./console.js";
import { isPostgresBusy, openPool, Rollback, type PgDb } from "./database.js";
import { StoreUnavailableError } from "../unavailable.js";
import { pgEvents } from "./events.js";
import { pgJobs } from "./jobs.js";
import { pgListings, positional } from "./listings.js";
import { pgMails } from "./mails.js";
import { pgMigrate, pgMigrationStatus } from "./migrations.js";
import { jobReadyHub } from "./notify.js";
import { pgRenewals } from "./renewals.js";
import { pgRetention } from "./retention.js";
import { pgAdoption } from "./adoption.js";
import { pgServices } from "./services.js";
import { tallyFolds } from "./tallies.js";

export interface PostgresStoreOptions {
  /**
   * Where "now" comes from. "database": PostgreSQL's clock, so that instances on several machines
   * agree on when a lease has run out; a Clock: that clock's time, passed as a parameter (tests
   * that move time). (Default: "database")
   */
  clock?: Clock | "database";
  /** Attempts before a job is failed. (Default: 20) */
  maxAttempts?: number;
  logger: Logger;
  /** Connections in the pool; the LISTEN connection is one more. (Default: 10) */
  poolSize?: number;
}

/** How long `health.writable()` may take before it answers "no". */
const HEALTH_TIMEOUT_MS = 2_000;

/** gen_random_uuid() (migration 005) is built in from 13 on. */
const MIN_SERVER_VERSION = 130000;

/** A Store on PostgreSQL (DATABASE_URL): any number of instances on one database, one pool each. */
export type PostgresStore = Store & { readonly db: PgDb };

/** The PostgreSQL store (DATABASE_URL); connects once to check the server before it returns. */
export async function openPostgresStore(url: string, options: PostgresStoreOptions): Promise<PostgresStore> {
  const { logger } = options;
  const db = openPool(url, { clock: options.clock ?? "database", logger, poolSize: options.poolSize });
  try {
    const [server] = await db.q<{ version: number; synchronous_commit: string }>(
      "SELECT current_setting('server_version_num')::int AS version, current_setting('synchronous_commit') AS synchronous_commit",
    );
    if (server!.version < MIN_SERVER_VERSION) throw new Error(`DATABASE_URL: PostgreSQL ${server!.version} is too old; 13 or newer is needed`);
    // An accepted webhook is answered 202 once its commit returns; with this off, a server crash
    // may take back commits already answered.
    if (server!.synchronous_commit === "off") {
      logger.warn("PostgreSQL runs with synchronous_commit = off: a server crash may lose webhooks already accepted; set it to on");
    }
  } catch (err) {
    await db.end();
    if (err instanceof Error && err.message.startsWith("DATABASE_URL:")) throw err;
    const why = err instanceof StoreUnavailableError ? err.reason : (err as Error).message;
    throw new Error(`DATABASE_URL: cannot use PostgreSQL at ${where(url)}: ${why}`, { cause: err });
  }

  const hub = jobReadyHub(db, url, logger);
  // The services are built after the jobs they enqueue into; a stopped job's record reaches them late-bound.
  const folds = tallyFolds(db);
  const listings = pgListings(db, folds);
  const audit = pgAudit(db);
  const jobs = pgJobs(db, () => hub.wake(), options.maxAttempts ?? 20, () => services, listings, audit, folds);
  const services = pgServices(db, jobs, listings, audit);
  let closing: Promise<void> | undefined;

  return {
    dialect: "postgres",
    db,
    jobs,
    services,
    events: pgEvents(db, services, jobs, audit),
    mails: pgMails(db),
    alerts: pgAlerts(db, jobs),
    renewals: pgRenewals(db, jobs, audit),
    retention: pgRetention(db),
    adoption: pgAdoption(db, services, jobs, audit),
    audit,
    sessions: pgSessions(db),
    consoleReads: pgConsoleReads(db),
    health: {
      // Lock and change a row, then roll back; a lock held elsewhere or a server that does not
      // answer make it "no" within HEALTH_TIMEOUT_MS, not a hung probe.
      async writable() {
        if (closing) return "the database is closed";
        const attempt = db
          .tx(async (t) => {
            await t.q("SELECT set_config('lock_timeout', '1000ms', true), set_config('statement_timeout', '1500ms', true)");
            await t.q("UPDATE migrations SET name = name WHERE id = (SELECT MAX(id) FROM migrations)");
            return new Rollback(undefined);
          })
          .then(
            () => undefined,
            (err: unknown) =>
              `not writable: ${err instanceof StoreUnavailableError ? err.reason : (err as Error).message}${isPostgresBusy(err) ? " (busy or unreachable; worth trying again)" : ""}`,
          );
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<string>((resolve) => {
          timer = setTimeout(() => resolve(`not writable: no answer from PostgreSQL within ${HEALTH_TIMEOUT_MS} ms`), HEALTH_TIMEOUT_MS);
        });
        try {
          return await Promise.race([attempt, late]);
        } finally {
          clearTimeout(timer);
        }
      },
    },
    async explain(read) {
      if (read === "job counts" || read === "oldest due job") return listings.explain(...jobs.planned[read]());
      const [sql, params] = listings.planned[read]();
      return listings.explain(...positional(sql, params));
    },
    async migrate() {
      return (await pgMigrate(db)).map(({ id, name }) => ({ id, name }));
    },
    async migrationStatus() {
      const s = await pgMigrationStatus(db);
      return { databaseVersion: s.databaseVersion, codeVersion: s.codeVersion, pending: s.pending.map(({ id, name }) => ({ id, name })) };
    },
    gauges: () => jobs.gauges(),
    async counts() {
      const [row] = await db.q<Record<"events" | "services" | "jobs" | "history" | "mails", number>>(
        `SELECT (SELECT COUNT(*) FROM events) AS events, (SELECT COUNT(*) FROM services) AS services, (SELECT COUNT(*) FROM jobs) AS jobs,
                (SELECT COUNT(*) FROM history) AS history, (SELECT COUNT(*) FROM mails) AS mails`,
      );
      return row!;
    },
    onJobReady(listener) {
      return hub.subscribe(listener);
    },
    isBusy: isPostgresBusy,
    // A server is not a file: there is nothing this process could find replaced under it.
    lost: () => undefined,
    close() {
      closing ??= (async () => {
        await hub.close();
        await folds.close();
        await db.end();
      })();
      return closing;
    },
  };
}

/** The server and database of a URL, without its credentials, for messages. */
function where(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname}`;
  } catch {
    return "(an unparsable URL)";
  }
}
