import type { JobOps } from "../store/store.js";
import type { Job } from "../vocabulary/jobs.js";

/** A job's state once nothing more will happen without the operator or new work: done, failed, blocked, or cancelled. */
export const isResolved = (job: Job): boolean => job.state === "succeeded" || job.state === "failed" || job.state === "blocked" || job.state === "cancelled";

/**
 * Lets a caller (a provisioning call, reconcile's repairs) wait for a job without holding anything
 * but a promise: no transaction, no worker slot. The runner of this process calls `notify` when
 * an attempt ends; a slow poll covers jobs run by another instance on a shared database.
 */
export class JobWaiter {
  private readonly waiting = new Map<number, Set<() => void>>();
  /** Set at shutdown: every wait ends at once with the job as it is. */
  private released = false;

  constructor(
    private readonly jobs: Pick<JobOps, "get">,
    /** How often a waiting call re-reads its job when no notification comes. (Default: 1000 ms) */
    private readonly pollMs = 1_000,
  ) {}

  /**
   * Ends every wait now and every later one at once (shutdown): the callers answer with the job as
   * it is (202 pending if unfinished) while the listener is still open, rather than lose their
   * connection when it closes.
   */
  releaseAll(): void {
    this.released = true;
    for (const id of [...this.waiting.keys()]) this.notify(id);
  }

  /** An attempt of job `id` ended (in any way). */
  notify(id: number): void {
    const wakers = this.waiting.get(id);
    if (!wakers) return;
    this.waiting.delete(id);
    for (const wake of wakers) wake();
  }

  /**
   * Resolves with the job once `settled(job)` holds, or with its latest state at `deadline`
   * (Unix ms). Undefined when the job does not exist.
   */
  async until(id: number, deadline: number, settled: (job: Job) => boolean | Promise<boolean> = isResolved): Promise<Job | undefined> {
    for (;;) {
      const job = await this.jobs.get(id);
      if (!job || (await settled(job)) || this.released) return job;
      const left = deadline - Date.now();
      if (left <= 0) return job;
      await this.sleep(id, Math.min(left, this.pollMs));
    }
  }

  private sleep(id: number, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiting.get(id) ?? new Set<() => void>();
      this.waiting.set(id, set);
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        set.delete(wake);
        if (set.size === 0 && this.waiting.get(id) === set) this.waiting.delete(id);
        resolve();
      }, ms);
      set.add(wake);
    });
  }
}
