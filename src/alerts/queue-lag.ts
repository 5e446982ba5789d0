import type { Store } from "../store/store.js";
import type { Alerts } from "./alerts.js";

/** The episode of a queue that has fallen behind: one at a time, whatever the jobs. */
export const QUEUE_LAG_ALERT = "queue-lag";

/**
 * Raises the queue-lag alert while the due job that has waited longest has waited more than
 * `thresholdMs` (QUEUE_LAG_ALERT_MINUTES), and resolves it once none has: a stuck or
 * overwhelmed runner is seen before customers wait for their licences. Reads the queue's own
 * index (oldest due job), not the jobs.
 */
export async function checkQueueLag(store: Store, alerts: Alerts, thresholdMs: number): Promise<{ lagging: boolean; ageMs: number }> {
  const q = await store.jobs.queue();
  if (q.oldestDueAt === null || q.oldestDueAgeMs <= thresholdMs) {
    await alerts.resolve(QUEUE_LAG_ALERT);
    return { lagging: false, ageMs: q.oldestDueAgeMs };
  }
  const depth = Object.values(q.queued).reduce((a, b) => a + b, 0);
  const minutes = Math.floor(q.oldestDueAgeMs / 60_000);
  await alerts.raise(
    QUEUE_LAG_ALERT,
    `job queue behind: the oldest due job has waited ${minutes} minutes`,
    `The oldest due job was due at ${new Date(q.oldestDueAt).toISOString()} and has not started (${minutes} minutes, ` +
      `above QUEUE_LAG_ALERT_MINUTES); ${depth} job(s) queued. Check that the service runs and can reach the reseller ` +
      "(GET /admin/queue, GET /readyz), and WORKER_CONCURRENCY against the backlog.",
  );
  return { lagging: true, ageMs: q.oldestDueAgeMs };
}
