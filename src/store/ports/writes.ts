import type { JobPriority } from "../../vocabulary/jobs.js";
import type { ServiceRow } from "../service-row.js";
import type { AuditDraft } from "./audit.js";

/**
 * What several ports' writes carry: a job to queue, a service's new row or its changed columns, a
 * history entry, an event's outcome, and the change of a service that holds them together. Apart
 * from any one port because the services, events, jobs, renewals, alerts and adoption ports all
 * take them, and the jobs port's endings carry a service's change: in the services or jobs file
 * they would make those two import each other.
 */

/** A job to queue: what `JobOps.enqueue` takes, and what a write queues with it. */
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

/** Columns a change may set (never the id or the timestamps). */
export type ServicePatch = Partial<Omit<ServiceRow, "service_id" | "license_key" | "created_at" | "updated_at" | "module">>;

/**
 * A service's first row. Without `provider` it is the reseller's, with no `sku` or `upstream_id`
 * (as every service was before migration 16), so writers that know one provider need not say so.
 */
export type NewService = Omit<
  ServiceRow,
  | "created_at"
  | "updated_at"
  | "ip_changes"
  | "companions"
  | "last_error"
  | "bundle_key"
  | "upstream_variant"
  | "expires_at"
  | "license_key"
  | "module"
  | "provider"
  | "sku"
  | "upstream_id"
> &
  Partial<Pick<ServiceRow, "provider" | "sku" | "upstream_id">> & { expires_at?: number | null };

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
