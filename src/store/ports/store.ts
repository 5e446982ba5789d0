import type { JobState } from "../../vocabulary/jobs.js";
import type { PlannedRead } from "../planned-reads.js";
import type { AdoptionOps } from "./adoption.js";
import type { AlertOps } from "./alerts.js";
import type { AuditOps } from "./audit.js";
import type { ConsoleReadOps } from "./console.js";
import type { EventOps } from "./events.js";
import type { HealthOps } from "./health.js";
import type { JobOps, QueueState } from "./jobs.js";
import type { MailOps } from "./mails.js";
import type { RenewalOps } from "./renewals.js";
import type { RetentionOps } from "./retention.js";
import type { ServiceOps } from "./services.js";
import type { SessionOps } from "./sessions.js";

/**
 * The one place the bridge's state is kept: every business operation is one call here, one
 * transaction in the store behind it. Two stores implement it with the same numbered migrations:
 * SQLite (the embedded default, src/store/sqlite/) and PostgreSQL (several instances on one
 * database, src/store/postgres/). No other folder writes SQL.
 *
 * Times are Unix milliseconds. Where a call takes a duration (a lease, a delay), the store adds
 * it to its own clock: the injected one for SQLite, the database's for PostgreSQL, so instances
 * on several machines agree on when a lease has run out.
 */
export interface Store {
  readonly dialect: "sqlite" | "postgres";
  readonly events: EventOps;
  readonly services: ServiceOps;
  readonly jobs: JobOps;
  readonly mails: MailOps;
  readonly alerts: AlertOps;
  readonly renewals: RenewalOps;
  readonly health: HealthOps;
  /** What RETENTION_DAYS lets go: old succeeded and cancelled jobs, processed events' payloads, sent mail records; and the terminated records and audit entries their own settings let go. */
  readonly retention: RetentionOps;
  /** Services taken over from a panel's export (`POST /admin/adopt`), as the reseller holds them. */
  readonly adoption: AdoptionOps;
  /** Who did what: the operators' audit trail (never pruned). */
  readonly audit: AuditOps;
  /** The operator console's sessions (migration 012). */
  readonly sessions: SessionOps;
  /** What the operator console reads beyond the admin API's listings. */
  readonly consoleReads: ConsoleReadOps;
  /** Applies pending migrations (once, whichever instance starts first); returns what it applied. */
  migrate(): Promise<{ id: number; name: string }[]>;
  migrationStatus(): Promise<MigrationStatus>;
  /** What a /metrics scrape reads of the database, in one read (one statement on PostgreSQL). */
  gauges(): Promise<StoreGauges>;
  /** Row counts per table, for tests and the fuzzers' "a refused request writes nothing". */
  counts(): Promise<Record<"events" | "services" | "jobs" | "history" | "mails", number>>;
  /**
   * The database's plan of one of the reads a request or a scrape makes (EXPLAIN QUERY PLAN on
   * SQLite, EXPLAIN on PostgreSQL with sequential scans priced out, so that the plan shows
   * whether an index can serve it at all), one line per step: for the index tests.
   */
  explain(read: PlannedRead): Promise<string[]>;
  /** Notified when a job becomes runnable now, in this process or (PostgreSQL) another instance. */
  onJobReady(listener: () => void): () => void;
  /** A store error worth trying again soon (SQLite: another process holds the write lock). */
  isBusy(err: unknown): boolean;
  /**
   * Why the database is no longer the one this process opened (SQLite: the file was deleted or
   * replaced), or undefined. Once lost, always lost: every write throws StoreUnavailableError.
   */
  lost(): string | undefined;
  close(): Promise<void>;
}

export interface MigrationStatus {
  databaseVersion: number;
  codeVersion: number;
  pending: { id: number; name: string }[];
}

/** The figures of the database a /metrics scrape shows, read together. */
export interface StoreGauges {
  /** As `jobs.counts()`. */
  jobs: Record<JobState, number>;
  /** As `jobs.queue()`. */
  queue: QueueState;
  /** Operator alert episodes open, as `alerts.open()` has them. */
  openAlerts: number;
}
