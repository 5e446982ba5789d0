import type { AuditOutcome } from "../../vocabulary/audit.js";

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
