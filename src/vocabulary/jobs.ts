export const JOB_STATES = ["queued", "running", "succeeded", "failed", "blocked"] as const;
export type JobState = (typeof JOB_STATES)[number];

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
