import type { Job, JobState } from "../vocabulary/jobs.js";
import type { ServiceStatus } from "../vocabulary/service-statuses.js";
import { whyNotWritable } from "../config/file-problems.js";

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
  /** Applies pending migrations (once, whichever instance starts first); returns what it applied. */
  migrate(): Promise<{ id: number; name: string }[]>;
  migrationStatus(): Promise<MigrationStatus>;
  /** Row counts per table, for tests and the fuzzers' "a refused request writes nothing". */
  counts(): Promise<Record<"events" | "services" | "jobs" | "history" | "mails", number>>;
  /** Notified when a job becomes runnable now, in this process or (PostgreSQL) another instance. */
  onJobReady(listener: () => void): () => void;
  /** A store error worth trying again soon (SQLite: another process holds the write lock). */
  isBusy(err: unknown): boolean;
  /**
   * Why the database is no longer the one this process opened (SQLite: the file was deleted or
   * replaced), or undefined. Once lost, always lost: nothing may be accepted into it.
   */
  lost(): string | undefined;
  close(): Promise<void>;
}

/**
 * The file cannot be opened or created at `path`: a missing or read-only directory, a path under
 * a regular file, a file that is not SQLite. A configuration problem, not a crash.
 */
export class DatabaseOpenError extends Error {
  constructor(
    readonly path: string,
    cause: unknown,
  ) {
    super(`cannot open or create ${path}: ${whyNotWritable(cause)}`, { cause });
    this.name = "DatabaseOpenError";
  }
}

/** The refusal to run code against a database that a newer release has migrated. */
export class DatabaseNewerThanCodeError extends Error {
  constructor(
    readonly databaseVersion: number,
    readonly codeVersion: number,
  ) {
    super(
      `the database is at migration ${databaseVersion} but this code only knows up to ${codeVersion}; ` +
        "run the newer release, or restore a backup taken before the upgrade",
    );
    this.name = "DatabaseNewerThanCodeError";
  }
}

export interface MigrationStatus {
  databaseVersion: number;
  codeVersion: number;
  pending: { id: number; name: string }[];
}

// ---- services -----------------------------------------------------------------------------


export interface ServiceRow {
  service_id: string;
  product_id: string;
  kind: "licence" | "bundle";
  type: string | null;
  bundle: string | null;
  bundle_key: string | null;
  variant: string | null;
  upstream_variant: string | null;
  ip: string;
  billing_cycle: string;
  months: number;
  status: ServiceStatus;
  customer_email: string | null;
  customer_name: string | null;
  expires_at: number | null;
  paid_until: number | null;
  ip_changes: number;
  companions: string;
  last_error: string | null;
  /** The event of the order that last (re)created the service; null for rows older than migration 4. */
  order_event_id: string | null;
  /** The provisioning API's stable name of the licence (`lb_...`). */
  license_key: string;
  /** The panel module that last called about it, `panel/version` from its User-Agent; null if none has. */
  module: string | null;
  created_at: number;
  updated_at: number;
}

/** Columns a change may set (never the id or the timestamps). */
export type ServicePatch = Partial<Omit<ServiceRow, "service_id" | "license_key" | "created_at" | "updated_at" | "module">>;

export type NewService = Omit<
  ServiceRow,
  "created_at" | "updated_at" | "ip_changes" | "companions" | "last_error" | "bundle_key" | "upstream_variant" | "expires_at" | "license_key" | "module"
> & { expires_at?: number | null };

export interface HistoryRow {
  id: number;
  service_id: string;
  at: number;
  event_id: string | null;
  job_id: number | null;
  action: string;
  detail: string | null;
}

export type NewHistory = { action: string; detail?: string | null; event_id?: string | null; job_id?: number | null };

export type EventOutcome = "applied" | "failed" | "skipped" | "ignored";

/**
 * What one step of a service's life writes, in one transaction: the service's columns, its
 * history, the outcome of the event it served, and the jobs it queues.
 */
export interface ServiceChange {
  serviceId: string;
  patch?: ServicePatch;
  /** Write only if the row was last updated at this time (someone else's change wins); `applied` says. */
  ifUpdatedAt?: number;
  history?: NewHistory[];
  event?: { id: string | null; outcome: EventOutcome; detail: string | null };
  enqueue?: NewJob[];
  /** The mail under this key went out: its row marked sent, with the history above. */
  mailSent?: string;
}

export interface ServiceOps {
  get(serviceId: string): Promise<ServiceRow | undefined>;
  byLicenseKey(key: string): Promise<ServiceRow | undefined>;
  list(status?: ServiceStatus, limit?: number): Promise<ServiceRow[]>;
  /** The service's received events and what came of them, oldest first. */
  history(serviceId: string): Promise<HistoryRow[]>;
  /** Services with a lifecycle job queued or running (reconcile leaves them alone). */
  busy(kinds: readonly string[]): Promise<Set<string>>;
  change(change: ServiceChange): Promise<{ applied: boolean; jobIds: number[] }>;
  /** Records the panel module that called about the service (`panel/version`); no write when it is the one recorded. Not a change of the licence: updated_at stays. */
  noteModule(serviceId: string, module: string): Promise<void>;
  /** The modules recorded on services, with how many services each last called about. */
  modules(): Promise<{ module: string; services: number }[]>;
}

// ---- intake -------------------------------------------------------------------------------

/** What the intake needs to know to judge one event, read inside its transaction. */
export interface IntakeView {
  existing: ServiceRow | undefined;
  /** The service's unfinished jobs (queued, running, blocked), in queue order. */
  unfinished: Job[];
  /** Other services that hold, or will hold, a licence at the event's IP (service.ip or changes.ip). */
  holders: ServiceRow[];
}

/** The intake's decision about one event: its answer and what to write. */
export type IntakeDecision<R> =
  | { write: false; result: R }
  | {
      write: true;
      result: R;
      event: { type: string; serviceId: string; payload: string; outcome: EventOutcome | null; detail: string | null };
      /** The service row this event (re)creates. */
      order?: { insert?: NewService; update?: ServicePatch };
      /** Other columns of an existing service, e.g. ip_changes + 1. */
      patch?: ServicePatch;
      job?: NewJob;
    };

/** What the store reads of an event: the service it is about (the rest is the deciding core's). */
export interface StoredEvent {
  type: string;
  service: { id: string };
}

export interface IntakeItem<E extends StoredEvent = StoredEvent> {
  webhookId: string;
  event: E;
  /** The queue of the event's service, whose unfinished jobs the view shows. */
  queueKey: string;
  /** The IP whose other holders the view shows (the order's, or the IP change's target). */
  ip: string | undefined;
}

export type AcceptedItem<R> = { duplicate: string } | { result: R; eventId?: string; jobId?: number };

/** One received event as stored: where it came from, and what came of it. */
export interface EventRow {
  id: string;
  /** The panel (or API) it came through; with `webhook_id`, what makes a delivery a duplicate. */
  source: string;
  webhook_id: string;
  type: string;
  service_id: string;
  /** The event as JSON. */
  payload: string;
  received_at: number;
  /** Null until its job has run (or for an event that needs none). */
  outcome: EventOutcome | null;
  detail: string | null;
}

export interface EventOps {
  /**
   * Accepts one delivery's events durably (the commit is fsynced before this resolves): each is
   * a duplicate of an event seen before under (source, webhook id), or judged by `decide` with
   * the view read inside the transaction. When `keep` says no (a rule refused one of several),
   * nothing is stored (`stored: false`). Results carry the new event id and job id.
   */
  accept<R, E extends StoredEvent>(
    source: string,
    items: readonly IntakeItem<E>[],
    decide: (item: IntakeItem<E>, view: IntakeView) => IntakeDecision<R>,
    keep: (results: AcceptedItem<R>[]) => boolean,
  ): Promise<{ stored: boolean; items: AcceptedItem<R>[] }>;
  get(eventId: string): Promise<EventRow | undefined>;
}

// ---- jobs ---------------------------------------------------------------------------------

export interface NewJob {
  kind: string;
  /** Jobs with the same queue key run one at a time, in the order they were enqueued. */
  queueKey?: string | null;
  serviceId?: string | null;
  eventId?: string | null;
  /** A second enqueue with the same key creates nothing and returns the first job. */
  uniqueKey?: string | null;
  payload?: unknown;
  /** Run no earlier than this long from now. (Default: at once) */
  delayMs?: number;
  maxAttempts?: number;
}

export interface JobFilter {
  state?: JobState;
  serviceId?: string;
  kind?: string;
  limit?: number;
}

/**
 * What a job that stops (failed, or blocked for the operator) writes to its service: decided
 * from the service row as it is inside the transaction that records the stop, and committed
 * with it, so no crash can leave a stopped job behind a service that does not show it.
 */
export type StopRecord = (state: "failed" | "blocked", service: ServiceRow) => Omit<ServiceChange, "serviceId" | "ifUpdatedAt" | "enqueue"> | undefined;

/** How an attempt ended, as the runner records it. */
export type JobEnding =
  /**
   * `change`: the handler's last write (the service's new state, its history, the event's outcome), committed with the ending.
   * `skipped`: the job did nothing, and why; it gives up its unique key, so the same work may be queued again later.
   */
  | { state: "succeeded"; change?: ServiceChange; skipped?: string }
  /** Another attempt after `delayMs`, or `failed` when the attempts are used up (then `stop` applies). */
  | { state: "retry"; error: string; code: string | null; delayMs: number; stop?: StopRecord }
  | { state: "blocked" | "failed"; error: string; code: string | null; stop?: StopRecord }
  /** Wait `delayMs` without failing; `spent: false` gives the attempt back. */
  | { state: "deferred"; error: string; delayMs: number; spent: boolean }
  /** Interrupted before doing anything: queued again at once, attempt not counted. */
  | { state: "released" };

export interface JobOps {
  enqueue(job: NewJob): Promise<{ id: number; created: boolean }>;
  /** Leases up to `limit` runnable jobs (due, and first unfinished of their queue) to `worker`. */
  claim(worker: string, limit: number, leaseMs: number): Promise<Job[]>;
  /** Puts back the running jobs of workers `isDead` says are gone; returns how many. */
  reclaimFrom(isDead: (worker: string) => boolean): Promise<number>;
  heartbeat(worker: string, leaseMs: number): Promise<void>;
  /**
   * Records the intent of a call that may charge; `durable` waits for the fsync. Returns false,
   * writing nothing, when `worker` no longer holds the job (its lease ran out and it was taken
   * back): then the call must not be made.
   */
  setIntent(id: number, worker: string, intent: unknown, durable: boolean): Promise<boolean>;
  /** Records how an attempt ended (if `worker` still holds the job); returns the state it is left in. */
  finish(job: Pick<Job, "id" | "attempts" | "maxAttempts" | "serviceId">, worker: string, ending: JobEnding): Promise<JobState | undefined>;
  /** Blocked jobs of `kind` unchanged for `olderThanMs` go back to the queue, attempts kept. */
  requeueBlocked(kind: string, olderThanMs: number): Promise<number>;
  /** The operator's retry of a failed or blocked job: queued again with fresh attempts. */
  retry(id: number): Promise<Job | undefined>;
  get(id: number): Promise<Job | undefined>;
  list(filter?: JobFilter): Promise<Job[]>;
  counts(): Promise<Record<JobState, number>>;
  unfinished(queueKey: string): Promise<Job[]>;
}

// ---- mails, alerts, renewals, health ------------------------------------------------------

export interface MailRow {
  id: number;
  mail_key: string;
  kind: string;
  event_id: string | null;
  job_id: number;
  service_id: string;
  to_address: string;
  subject: string;
  message_id: string;
  state: "sending" | "sent";
  attempts: number;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
}

export interface MailOps {
  get(key: string): Promise<MailRow | undefined>;
  /** Records, before the SMTP conversation, that the mail is being sent (a sent row is never reopened). */
  begin(row: Pick<MailRow, "mail_key" | "kind" | "event_id" | "job_id" | "service_id" | "to_address" | "subject" | "message_id">): Promise<void>;
  failed(key: string, error: string): Promise<void>;
}

export interface AlertOps {
  /** Opens an episode (true), or counts one more occurrence of an open one (false); `enqueue` goes with an opening. */
  raise(key: string, subject: string, detail: string, enqueue?: (openedAt: number) => NewJob): Promise<boolean>;
  /** Closes the open episodes among `keys`, in one write; returns the keys it closed. */
  resolve(keys: readonly string[]): Promise<string[]>;
  open(): Promise<{ key: string; subject: string; opened_at: number; count: number }[]>;
}

/**
 * How far paid-until must lie beyond the upstream term end for the term to be renewed: a day.
 * Paid-until and the term end come from different clocks (the panel's due date, the reseller's
 * expiry, a licence adopted minutes before its new paid cycle began), so a gap of minutes or
 * hours is the same date seen twice, and renewing for it would buy a whole cycle for nothing.
 */
export const RENEWAL_MIN_GAP_MS = 86_400_000;

export interface DueRenewal {
  service_id: string;
  expires_at: number;
}

export interface RenewalOps {
  /**
   * Enqueues, in one transaction, a job per active licence paid beyond its term whose term ends
   * within `leadMs` (all, or the one service): `job(due)` builds it, its unique key making a
   * second sweep of the same term create nothing.
   */
  sweep(leadMs: number, job: (due: DueRenewal) => NewJob, serviceId?: string): Promise<{ due: DueRenewal; id: number; created: boolean }[]>;
  /** Paid, active licences ending within `withinMs` whose renewal job for that term (key) was tried and has not succeeded. */
  atRisk(withinMs: number, keyOf: (due: DueRenewal) => string): Promise<(DueRenewal & { ip: string; job_id: number; state: string; last_error: string | null })[]>;
}

export interface HealthOps {
  /** The database takes a write now (without waiting long for a lock); the reason when not. */
  writable(): Promise<string | undefined>;
}
