/**
 * A job's states. `cancelled`: an operator ended a failed or blocked job that recorded no charge
 * intent; it does nothing more and holds its queue no longer (a job that may have charged is
 * retried or reconciled, never cancelled).
 */
export const JOB_STATES = ["queued", "running", "succeeded", "failed", "blocked", "cancelled"] as const;
export type JobState = (typeof JOB_STATES)[number];

/**
 * Which due jobs a claim takes first: the lower number. Mail (a customer's install command, an
 * operator's alert) is what a person waits for, and there is at most one per order or episode,
 * so it goes first and cannot hold the rest back for long; a backlog of lifecycle work no longer
 * delays it. One queue's jobs (one service's lifecycle) keep their order whatever their
 * priorities: a job never starts before an earlier one of its queue.
 */
export const JOB_PRIORITY = { mail: 0, normal: 1 } as const;
export type JobPriority = (typeof JOB_PRIORITY)[keyof typeof JOB_PRIORITY];
/** Every priority, most urgent first: the order claims take them in. */
export const JOB_PRIORITIES: readonly JobPriority[] = [JOB_PRIORITY.mail, JOB_PRIORITY.normal];

export interface Job {
  id: number;
  kind: string;
  queueKey: string | null;
  serviceId: string | null;
  eventId: string | null;
  uniqueKey: string | null;
  payload: unknown;
  state: JobState;
  attempts: number;
  maxAttempts: number;
  runAt: number;
  leaseUntil: number | null;
  leasedBy: string | null;
  /** Set while a call that may charge money is (or was) under way; see JobContext.withIntent. */
  intent: unknown;
  lastError: string | null;
  /** Why it stopped (blocked or failed), as a stable code (src/vocabulary/error-codes.ts). */
  errorCode: string | null;
  /** Set when the job succeeded without doing its work, and why (e.g. a renewal of a service being terminated). */
  skipped: string | null;
  createdAt: number;
  updatedAt: number;
}
