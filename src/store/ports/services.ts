import type { ProviderName } from "../../vocabulary/provider-names.js";
import type { ServiceStatus } from "../../vocabulary/service-statuses.js";
import type { Page, PageRequest } from "../paging.js";
import type { ServiceRow } from "../service-row.js";
import type { AuditDraft } from "./audit.js";
import type { NewHistory, NewJob, ServiceChange } from "./writes.js";

/**
 * A service as reconcile and the adoption plan compare it with each provider's licence list: the
 * columns they read, nothing else, so that every service of a large book can be held at once.
 */
export type ServiceBrief = Pick<
  ServiceRow,
  | "service_id"
  | "kind"
  | "type"
  | "bundle"
  | "bundle_key"
  | "variant"
  | "upstream_variant"
  | "ip"
  | "status"
  | "expires_at"
  | "updated_at"
  | "provider"
  | "sku"
  | "upstream_id"
>;

export interface HistoryRow {
  id: number;
  service_id: string;
  at: number;
  event_id: string | null;
  job_id: number | null;
  action: string;
  detail: string | null;
}

/** Which licences a listing or an export holds. */
export interface LicenseFilter {
  status?: ServiceStatus;
  /** One provider's licences only. */
  provider?: ProviderName;
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
  /**
   * The services, every status but terminated, that record `upstreamId` as `provider`'s own id of
   * their licence (Manage2's licenseid), by service id; normally one at most. One licence belongs
   * to one service by its id too: a suspended Manage2 service's licence stays expired at the IP
   * it left, to be reactivated by that id, so an order there must not take it (issue 36).
   */
  byLicenceId(provider: ProviderName, upstreamId: string): Promise<ServiceRow[]>;
  /**
   * The services other than `except`, every status but terminated, whose row says they hold
   * `provider`'s licence of `sku` at `ip`, by service id. A change removing the licence it
   * replaced asks first: one another service uses now is that service's, not to be removed.
   */
  holdingLicence(provider: ProviderName, ip: string, sku: string, except: string): Promise<ServiceRow[]>;
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
