import { JobWaiter } from "../jobs/waiter.js";
import type { Store } from "../store/store.js";
import type { DriftItem, HandledItem } from "./drift.js";

/** An upstream suspension reconcile queued in its service's queue, and the item it answers. */
export interface QueuedSuspension {
  item: DriftItem;
  jobId: number;
  what: string;
  /** The provider it is suspended at, as texts name it. */
  at: string;
}

/** Waits (up to `waitMs`) for the queued suspensions; what is not carried out by then goes to the person. */
export async function awaitSuspensions(store: Pick<Store, "jobs">, queued: QueuedSuspension[], waitMs: number): Promise<{ fixed: HandledItem[]; manual: HandledItem[] }> {
  const fixed: HandledItem[] = [];
  const manual: HandledItem[] = [];
  const waiter = new JobWaiter(store.jobs, 100);
  const deadline = Date.now() + waitMs;
  const jobs = await Promise.all(queued.map((q) => waiter.until(q.jobId, deadline)));
  queued.forEach((q, i) => {
    const job = jobs[i];
    if (job?.state === "succeeded") fixed.push({ ...q.item, fix: `suspended ${q.what} at ${q.at} (job ${q.jobId})` });
    else if (job?.state === "failed" || job?.state === "blocked" || job?.state === "cancelled") {
      manual.push({ ...q.item, fix: `suspend ${q.what} at ${q.at}`, error: job.lastError ?? `job ${q.jobId} ${job.state}` });
    } else {
      manual.push({ ...q.item, fix: `queued as job ${q.jobId} to suspend ${q.what} at ${q.at}; not done yet: is the service running? (license-bridge jobs list)` });
    }
  });
  return { fixed, manual };
}
