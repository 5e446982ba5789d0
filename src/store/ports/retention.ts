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
