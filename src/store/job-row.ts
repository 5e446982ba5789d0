import { JOB_STATES, type Job, type JobState } from "../vocabulary/jobs.js";

/** A row of the `jobs` table, the same columns in both dialects (payload and intent as JSON text). */
export interface JobRow {
  id: number;
  kind: string;
  queue_key: string | null;
  service_id: string | null;
  event_id: string | null;
  unique_key: string | null;
  payload: string;
  state: JobState;
  attempts: number;
  max_attempts: number;
  run_at: number;
  lease_until: number | null;
  leased_by: string | null;
  intent: string | null;
  last_error: string | null;
  error_code: string | null;
  skipped: string | null;
  created_at: number;
  updated_at: number;
}

export function toJob(r: JobRow): Job {
  return {
    id: r.id,
    kind: r.kind,
    queueKey: r.queue_key,
    serviceId: r.service_id,
    eventId: r.event_id,
    uniqueKey: r.unique_key,
    payload: JSON.parse(r.payload) as unknown,
    state: r.state,
    attempts: r.attempts,
    maxAttempts: r.max_attempts,
    runAt: r.run_at,
    leaseUntil: r.lease_until,
    leasedBy: r.leased_by,
    intent: r.intent === null ? null : (JSON.parse(r.intent) as unknown),
    lastError: r.last_error,
    errorCode: r.error_code,
    skipped: r.skipped ?? null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Jobs per state, every state present (0 when none), summed from counter rows (by state and kind). */
export function jobsByState(rows: Iterable<{ state: JobState | null; n: number | null }>): Record<JobState, number> {
  const out = Object.fromEntries(JOB_STATES.map((state) => [state, 0])) as Record<JobState, number>;
  for (const r of rows) if (r.state !== null) out[r.state] += r.n!;
  return out;
}
