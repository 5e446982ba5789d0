import type { Job, JobPriority, JobState } from "../vocabulary/jobs.js";
import type { ServiceStatus } from "../vocabulary/service-statuses.js";
import type { AuditOutcome } from "../vocabulary/audit.js";
import type { Role } from "../vocabulary/roles.js";
import { whyNotWritable } from "../config/file-problems.js";
import type { Page, PageRequest } from "./paging.js";
import type { ServiceRow } from "./service-row.js";

export { decodeCursor, eachPage, encodeCursor, PAGE_LIMIT, yieldToEventLoop, type Listing, type Page, type PageRequest } from "./paging.js";
export { licenseView, type ServiceRow } from "./service-row.js";
export { StoreUnavailableError } from "./unavailable.js";

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

/**
 * The reads whose plans test/store/plans.test.ts checks: each listing, search and total an
 * admin request or CLI page makes, and what a /metrics scrape reads. Every one must be an index
 * range (or a handful of counter rows), never a scan of a table that grows with the business.
 */
export const PLANNED_READS = [
  "licenses",
  "licenses by status",
  "licenses search",
  "licenses search by status",
  "licenses total",
  "licenses total by status",
  "licenses search total",
  "jobs",
  "jobs by state",
  "jobs by kind",
  "jobs by kind and state",
  "jobs by service",
  "jobs total",
  "jobs total by service",
  "history",
  "history total",
  "service briefs",
  "job counts",
  "oldest due job",
] as const;
export type PlannedRead = (typeof PLANNED_READS)[number];

// ---- services -----------------------------------------------------------------------------

/** Columns a change may set (never the id or the timestamps). */
/**
 * A service as reconcile and the adoption plan compare it with the reseller's licence list: the
 * columns they read, nothing else, so that every service of a large book can be held at once.
 */
export type ServiceBrief = Pick<
  ServiceRow,
  "service_id" | "kind" | "type" | "bundle" | "bundle_key" | "variant" | "upstream_variant" | "ip" | "status" | "expires_at" | "updated_at"
>;

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
  /**
   * The operator's action this change carries out: one audit entry each, for this service,
   * written in the change's transaction (outcome ok; refused, alone, when `ifUpdatedAt` finds the
   * row changed). Its job is the draft's, else the first job the change queues.
   */
  audit?: AuditDraft[];
}

/** Which licences a listing or an export holds. */
export interface LicenseFilter {
  status?: ServiceStatus;
  /**
   * One licence by any of its keys: the service id, the IP (in any spelling of the address), the
   * customer's e-mail (in any case) or the licence key; each an index look-up.
   */
  q?: string;
}

/** Which licences a page lists. */
export type LicenseQuery = PageRequest & LicenseFilter;

export interface ServiceOps {
  get(serviceId: string): Promise<ServiceRow | undefined>;
  byLicenseKey(key: string): Promise<ServiceRow | undefined>;
  /** Up to `limit` services by id (all of them without one), for tests and small internal look-ups; listings use `page`. */
  list(status?: ServiceStatus, limit?: number): Promise<ServiceRow[]>;
  /** One page of the licences, by service id. */
  page(query: LicenseQuery): Promise<Page<ServiceRow>>;
  /**
   * Every licence the filter matches, by service id, as NDJSON (`licenseView`, one a line) in
   * chunks of whole lines, read a page at a time as the caller takes them; leaving the loop ends
   * the reading. On SQLite the reads and the JSON run in a worker thread with a read-only
   * connection of its own (sqlite/export.ts): the event loop only passes the chunks on. Those
   * workers are capped per process: an export may wait for one before its first chunk, and
   * `signal` aborting while it waits (the client went away) ends it with the signal's reason.
   */
  exportChunks(filter: LicenseFilter, options?: { signal?: AbortSignal }): AsyncIterable<string>;
  /**
   * Up to `limit` services after the service id `after` (from the first without it), by service
   * id, as briefs: reconcile and the adoption plan walk every service so, one index range a page.
   */
  briefs(after: string | undefined, limit: number): Promise<ServiceBrief[]>;
  /** The service's received events and what came of them, oldest first: all of them (tests); the admin API pages `historyPage`. */
  history(serviceId: string): Promise<HistoryRow[]>;
  /** One page of the service's history, newest first (its events and what came of them). */
  historyPage(serviceId: string, page: PageRequest): Promise<Page<HistoryRow>>;
  /** Services with a lifecycle job queued or running (reconcile leaves them alone). */
  busy(kinds: readonly string[]): Promise<Set<string>>;
  change(change: ServiceChange): Promise<{ applied: boolean; jobIds: number[] }>;
  /**
   * The operator's reset of the service's IP-change counter to 0, in one transaction with its
   * history entry ("IP-change counter reset by <actor>") and its audit entry (ok; refused, alone,
   * for a service the bridge does not know). The service as reset, or undefined when there is none.
   */
  resetIpChanges(serviceId: string, audit: AuditDraft): Promise<ServiceRow | undefined>;
  /**
   * Queues a job an operator asked for (the install mail again), decided on the service as it is
   * inside the transaction that writes it: `refuse` says why not (then only the refusal is
   * audited), else the job, its history entry and the audit entry (ok, with the job) commit
   * together. A job whose unique key is taken already (the same request again) is answered as
   * that job, and nothing else is written.
   */
  queueForOperator<R extends { message: string }>(serviceId: string, request: OperatorJobRequest<R>): Promise<OperatorJobResult<R>>;
  /** Records the panel module that called about the service (`panel/version`); no write when it is the one recorded. Not a change of the licence: updated_at stays. */
  noteModule(serviceId: string, module: string): Promise<void>;
  /** The modules recorded on services, with how many services each last called about. */
  modules(): Promise<{ module: string; services: number }[]>;
}

/** What `ServiceOps.queueForOperator` writes, and the rule it checks first. */
export interface OperatorJobRequest<R extends { message: string }> {
  job: NewJob;
  history: NewHistory;
  audit: AuditDraft;
  /** Why the action does not apply to the service as it is now, or undefined when it does. */
  refuse(service: ServiceRow): R | undefined;
}

export type OperatorJobResult<R> =
  | { status: "unknown_service" }
  | { status: "refused"; refusal: R }
  /** `created` false: the job was there already (its unique key), and nothing was written. */
  | { status: "queued"; jobId: number; created: boolean; service: ServiceRow };

/** The history entry of an IP-change counter reset. */
export function ipChangesResetHistory(actor: string, was: number): NewHistory {
  return { action: "IP changes reset", detail: `IP-change counter reset by ${actor} (from ${was} to 0)` };
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
      /** History entries of the service, written with the event (naming it). */
      history?: NewHistory[];
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
  /** An operator's action (the console, the admin API): its entry (ok, with the job) is written with the event. */
  audit?: AuditDraft;
}

/**
 * `duplicate`: the id of the event first accepted under the same (source, webhook id), and its
 * `type` (a source whose type rests on an unsigned input compares it with its own), whether the
 * event is still stored or a prune left only its key.
 */
export type AcceptedItem<R> = { duplicate: string; type: string } | { result: R; eventId?: string; jobId?: number };

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
   * a duplicate of an event seen before under (source, webhook id) (its row, or the key a prune
   * left of it in webhook_keys: a delivery is a duplicate for ever), or judged by `decide` with
   * the view read inside the transaction. When `keep` says no (a rule refused one of several),
   * nothing is stored (`stored: false`). Results carry the new event id and job id.
   */
  accept<R, E extends StoredEvent>(
    source: string,
    items: readonly IntakeItem<E>[],
    decide: (item: IntakeItem<E>, view: IntakeView) => IntakeDecision<R>,
    keep: (results: AcceptedItem<R>[]) => boolean,
  ): Promise<{ stored: boolean; items: AcceptedItem<R>[] }>;
  /** The event as stored; undefined once a prune deleted it (its key stays: see accept). */
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
  /** Claims take due jobs of a lower number first (queue order is kept whatever it is). (Default: JOB_PRIORITY.normal) */
  priority?: JobPriority;
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

/** Which jobs a page lists, newest first. */
export type JobQuery = Omit<JobFilter, "limit"> & PageRequest;

/** How far the queue is behind: what /metrics, GET /admin/queue and the lag alert read. */
export interface QueueState {
  /** Jobs queued (due now, or waiting for a retry's time), by kind. */
  queued: Record<string, number>;
  /**
   * When the job that has waited longest to start was due (run_at), of the jobs that could start
   * now (due, and not waiting behind an earlier job of their queue); null when none waits.
   */
  oldestDueAt: number | null;
  /** How long that is ago, on the store's clock (0 when none waits). */
  oldestDueAgeMs: number;
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
  /**
   * The operator's retry of a failed or blocked job: queued again with fresh attempts. With
   * `audit`, the entry is written in the same transaction: ok with the job and its service, or
   * refused (no such job, or a job neither failed nor blocked; then nothing else is written).
   */
  retry(id: number, audit?: AuditDraft): Promise<Job | undefined>;
  /**
   * The operator's cancel of a failed or blocked job with no charge intent: it ends `cancelled`,
   * runs no more, holds its queue no longer, and gives up its unique key (as a skipped job does,
   * so the same work, a renewal's term, may be queued again when it is wanted again). In the
   * same transaction: the audit entry (ok with the job and its service, or refused, alone, saying
   * why), the service's history entry, and the event's outcome (`skipped`) if it had none yet.
   */
  cancel(id: number, audit: AuditDraft): Promise<JobCancel>;
  get(id: number): Promise<Job | undefined>;
  /** Up to `limit` jobs (default 500), newest first, for tests and small internal look-ups; listings use `page`. */
  list(filter?: JobFilter): Promise<Job[]>;
  /** One page of the jobs, newest first. */
  page(query: JobQuery): Promise<Page<Job>>;
  /** Jobs by state, from the counters kept with the writes: a few rows, however many jobs there are. */
  counts(): Promise<Record<JobState, number>>;
  queue(): Promise<QueueState>;
  unfinished(queueKey: string): Promise<Job[]>;
}

/**
 * Why a job cannot be cancelled: there is no such job; it is not failed or blocked; or it
 * recorded a charge intent, so a charge may have happened upstream: only a retry (which checks
 * what the reseller holds before it buys) or a reconcile can tell.
 */
export type CancelRefusal = "unknown_job" | "not_stopped" | "charge_intent";
export type JobCancel = { cancelled: Job } | { refused: CancelRefusal; job: Job | undefined };

/** Why the job as it stands (a row, JSON intent and all) may not be cancelled, or undefined when it may. */
export function whyNotCancellable(job: { state: string; intent: unknown } | undefined): CancelRefusal | undefined {
  if (!job) return "unknown_job";
  if (job.state !== "failed" && job.state !== "blocked") return "not_stopped";
  return job.intent !== null ? "charge_intent" : undefined;
}

/** A cancel's refusal in words: the audit entry's detail, and the 409 or CLI line. */
export function cancelRefusalText(refused: CancelRefusal, job: Pick<Job, "id" | "state"> | undefined): string {
  switch (refused) {
    case "unknown_job":
      return "no such job";
    case "not_stopped":
      return `job ${job?.id} is ${job?.state}; only failed or blocked jobs can be cancelled`;
    case "charge_intent":
      return (
        `job ${job?.id} recorded a charge intent: a charge may have happened at the reseller, so it cannot be cancelled; ` +
        "retry it (the re-run checks what the reseller holds before it buys) or reconcile"
      );
  }
}

/** What a cancel writes about the job's service: its history entry, and its event's outcome if none was recorded. */
export function cancelRecord(job: Pick<Job, "id" | "kind" | "state" | "lastError" | "eventId">, actor: string) {
  const why = `${job.kind} job ${job.id} cancelled by ${actor}`;
  return {
    history: { action: "job cancelled", detail: `${why}; it was ${job.state}${job.lastError ? `: ${job.lastError}` : ""}`, job_id: job.id, event_id: job.eventId } satisfies NewHistory,
    outcome: { outcome: "skipped" as const satisfies EventOutcome, detail: why },
  };
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

export interface DueRenewal {
  service_id: string;
  expires_at: number;
}

/**
 * An active service whose term ends by a horizon, as the renewal queries read it through
 * `services_due (status, expires_at)`: what src/intake/renewal-due.ts needs to say whether its
 * term is due. The stores decide nothing about renewals beyond that read.
 */
export type RenewalCandidate = DueRenewal & Pick<ServiceRow, "status" | "paid_until">;

export type UpcomingRenewal = RenewalCandidate & Pick<ServiceRow, "product_id" | "ip" | "kind" | "type" | "bundle" | "variant" | "upstream_variant" | "months">;

export interface RenewalOps {
  /**
   * In one transaction: every candidate whose term ends within `leadMs` of the store's clock
   * (all, or the one service) is handed to `job` with that clock's now; each job it returns (a
   * term it finds due) is enqueued, its unique key making a second sweep of the same term create
   * nothing. Answers the enqueued ones.
   */
  sweep(
    leadMs: number,
    job: (candidate: RenewalCandidate, now: number) => NewJob | undefined,
    serviceId?: string,
    audit?: AuditDraft,
  ): Promise<{ due: DueRenewal; id: number; created: boolean }[]>;
  /**
   * The candidates whose term ends by `horizon` (epoch ms), earliest first: what the forecast
   * asks the rule about. (`audit` above: an entry per renewal job a sweep an operator asked for queued.)
   */
  upcoming(horizon: number): Promise<UpcomingRenewal[]>;
  /**
   * Candidates ending within `withinMs` whose renewal job for that term was tried and has not
   * succeeded. `keyOf` names that job's unique key, or answers undefined for a term that is not
   * due (its job is not looked up).
   */
  atRisk(withinMs: number, keyOf: (candidate: RenewalCandidate) => string | undefined): Promise<(DueRenewal & { ip: string; job_id: number; state: string; last_error: string | null })[]>;
}

// ---- audit --------------------------------------------------------------------------------

/**
 * Who acts, and what they do: what a route or command hands a store operation, which adds when,
 * the service or job, and the outcome as its transaction finds them. (src/http/auth.ts `auditFor`
 * makes one from a request.)
 */
export interface AuditDraft {
  actor: string;
  action: string;
  /** What was asked or done, in words (never a secret). */
  detail?: string | null;
  /** The job it is about, when the caller knows it. */
  job_id?: number | null;
}

/** The drafts of a change that did not apply because its service changed meanwhile, saying so. */
export function refusedAsChanged(drafts: readonly AuditDraft[] | undefined): AuditDraft[] {
  return (drafts ?? []).map((d) => ({ ...d, detail: `${d.detail ? `${d.detail}; ` : ""}not done: the service changed meanwhile` }));
}

/** An entry written on its own (a change outside the bridge's state: a reseller credit; a run's summary). */
export interface NewAuditEntry extends AuditDraft {
  service_id?: string | null;
  outcome: AuditOutcome;
}

export interface AuditEntry {
  id: number;
  /** Epoch ms: the store's clock (PostgreSQL: the database's) in the transaction that wrote it. */
  at: number;
  actor: string;
  action: string;
  service_id: string | null;
  job_id: number | null;
  outcome: AuditOutcome;
  detail: string | null;
}

export interface AuditFilter {
  actor?: string;
  action?: string;
  serviceId?: string;
  jobId?: number;
  outcome?: AuditOutcome;
  /** Entries at or after this time (epoch ms). */
  since?: number;
  /** Entries before this time (epoch ms). */
  until?: number;
  /** Entries older than this id: the page after the one that ended with it. */
  beforeId?: number;
  /** (Default: 100) */
  limit?: number;
}

export interface AuditOps {
  /** Writes one entry by itself, in its own transaction. */
  record(entry: NewAuditEntry): Promise<AuditEntry>;
  /** Entries matching `filter`, newest first, one page; `total` counts every match (all pages). */
  list(filter?: AuditFilter): Promise<{ entries: AuditEntry[]; total: number }>;
}

export interface HealthOps {
  /** The database takes a write now (without waiting long for a lock); the reason when not. */
  writable(): Promise<string | undefined>;
}

// ---- retention ----------------------------------------------------------------------------

/** What the prune removes, each kind in batches of its own. */
export const PRUNABLE_KINDS = ["jobs", "events", "mails"] as const;
export type PrunableKind = (typeof PRUNABLE_KINDS)[number];

/** The payload a processed event keeps once pruned: the row stays (its webhook id still dedupes, its history still shows). */
export const PRUNED_PAYLOAD = "{}";


/**
 * Rows older than `before` (Unix ms) that nothing depends on any more:
 * - `jobs`: succeeded (done, or skipped) and cancelled jobs with no charge intent, deleted; never
 *   a queued, running, blocked or failed one, whose intent says what a charge may have done, and
 *   never one of a service's two latest record_payment jobs (a dateless renew's id is built from them);
 * - `events`: the payload of an event whose outcome is recorded and no unfinished job of which
 *   is left, emptied to PRUNED_PAYLOAD; the row itself, its (source, webhook id) and its place
 *   in the service's history are kept for ever (until TERMINATED_RETENTION_DAYS, when set, takes
 *   the whole record of a service terminated long ago: see pruneTerminatedBatch), and the space
 *   the payload held is freed (not left inside the row's page);
 * - `mails`: sent mail records whose job is finished, deleted.
 * History, services, alerts and any other table are never touched, but for the records of a
 * service terminated long ago (pruneTerminatedBatch) and the audit trail (pruneAuditBatch), each
 * with its own age; the keys of webhook_keys (migration 015) are never deleted.
 */
export interface RetentionOps {
  /** How many rows of each kind a prune at `before` would touch. */
  prunable(before: number): Promise<Record<PrunableKind, number>>;
  /** At most `limit` rows of one kind, in one short transaction; returns how many. */
  pruneBatch(kind: PrunableKind, before: number, limit: number): Promise<number>;
  /** After a prune that removed rows: makes their space reusable at once, where the store does not by itself. */
  reclaim(): Promise<void>;
  /**
   * TERMINATED_RETENTION_DAYS: how many terminated services a prune at `before` would empty of
   * their records (see pruneTerminatedBatch for which).
   */
  terminatedPrunable(before: number): Promise<number>;
  /**
   * Up to `limit` services terminated (last written) before `before`, with no job unfinished or
   * holding a charge's intent and every event of theirs processed and older than `before`: in one
   * transaction, deletes their history, events, jobs and mail records, keeps the service's row as it
   * is (a late event or a new order is decided as before) and marks it pruned at `now`. No history
   * entry says so: a row kept for each would pin an index page of the history for ever (on
   * PostgreSQL, whose b-trees never merge pages, the history's indexes then grew a quarter a year).
   * Returns how many services.
   */
  pruneTerminatedBatch(before: number, limit: number, now: number): Promise<number>;
  /** AUDIT_RETENTION_DAYS: how many audit entries were written before `before`. */
  auditPrunable(before: number): Promise<number>;
  /** Up to `limit` of the audit entries written before `before`, oldest first, deleted in one short transaction; returns how many. */
  pruneAuditBatch(before: number, limit: number): Promise<number>;
}

// ---- adoption -----------------------------------------------------------------------------

/** A service taken over as the reseller holds it: its status, expiry, variant and bundle key from the licence list. */
export type AdoptedService = NewService & { expires_at: number | null; upstream_variant: string | null; bundle_key: string | null; companions: string };

export interface AdoptionWrite {
  service: AdoptedService;
  history: NewHistory[];
  /** Jobs queued with the row (the install mail, when the operator asks for it). */
  enqueue?: NewJob[];
}

export interface AdoptionOps {
  /**
   * Writes one batch of adopted services in one transaction: each a new row with its history,
   * unless the bridge has that service already (`known`: another run, or an order, came first)
   * or `refuse`, given the other services that hold its IP now or will once a queued IP change is
   * applied (read inside the transaction), says why not (`refused`). Nothing else is written: no
   * event, and no job but those the write names. A batch committed stays; a later run finds those services known.
   */
  insert(
    batch: readonly AdoptionWrite[],
    refuse: (write: AdoptionWrite, holders: readonly ServiceRow[]) => string | undefined,
    /** The operator's action: an entry (outcome ok) for each service written, in the batch's transaction. */
    audit?: AuditDraft,
  ): Promise<{ inserted: string[]; known: string[]; refused: { service_id: string; reason: string }[] }>;
}

// ---- the operator console ------------------------------------------------------------------

/** A console session as stored: never its id, only the SHA-256 of it (the row's key). */
export interface SessionRow {
  operator: string;
  role: Role;
  created_at: number;
  last_seen_at: number;
}

/**
 * Server-side console sessions. The store keeps them; the console decides when one has expired
 * (idle and absolute limits, src/console/session.ts) and deletes it then.
 */
export interface SessionOps {
  create(idSha256: string, session: SessionRow): Promise<void>;
  get(idSha256: string): Promise<SessionRow | undefined>;
  /** The session was used at `at`. */
  touch(idSha256: string, at: number): Promise<void>;
  /** Logout or expiry; true when there was one. */
  delete(idSha256: string): Promise<boolean>;
  /** Ends every session of the operator `name` (a reload changed their tokens or role, or removed them); returns how many. */
  deleteFor(operator: string): Promise<number>;
  /** Deletes every session idle since before `idleBefore` or created before `createdBefore`; returns how many. */
  deleteExpired(idleBefore: number, createdBefore: number): Promise<number>;
}

/** One day of the overview's chart (UTC days; `day` is the Unix day number). */
export interface DailyActivity {
  day: number;
  orders: number;
  renewals: number;
  failures: number;
}

export interface LicenceSearch {
  /** Exact service id, IP, licence key, or customer e-mail (any case). */
  q?: string;
  status?: ServiceStatus;
  /** Keyset cursor: the last service id of the previous page. */
  after?: string;
  limit: number;
}

export interface ConsoleReadOps {
  /** How many services have each status (a status with none is left out). */
  statusCounts(): Promise<Partial<Record<ServiceStatus, number>>>;
  /** Orders received, renewals bought and jobs that stopped (failed or blocked), per UTC day since `since`. */
  daily(since: number): Promise<DailyActivity[]>;
  /** Licences in service id order, matching the search. */
  searchLicences(search: LicenceSearch): Promise<ServiceRow[]>;
  /** A service's mails, newest first. */
  mailsOf(serviceId: string, limit: number): Promise<MailRow[]>;
}
