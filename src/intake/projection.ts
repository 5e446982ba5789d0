import type { Job } from "../vocabulary/jobs.js";
import type { ServiceRow } from "../store/store.js";
import type { ServiceStatus } from "../vocabulary/service-statuses.js";
import { JOB_KINDS } from "../vocabulary/job-kinds.js";

/**
 * What a service will be once the jobs already accepted for it are applied: its stored row
 * folded with its unfinished jobs, in queue order. The intake's rules compare with this, not with
 * the row (an IP change and its reversal sent in quick succession are both accepted), and a
 * charging job compares with the projection of the jobs queued behind it (a renewal waiting on a
 * topped-up balance must not buy a term for a service whose termination came in meanwhile).
 */
export interface Projection {
  ip: string;
  /**
   * The status the service will have as far as the queued jobs tell: a suspend or unsuspend of
   * an active or suspended service, a termination, an order (pending until bought: active).
   */
  status: ServiceStatus;
  /** Terminated, or will be once a queued termination is applied. */
  terminated: boolean;
  /** A termination is accepted but not applied yet (not undone by an order after it). */
  terminating: boolean;
  /** The queued job that decides the status above, when one does (the operator is told which). */
  decidedBy?: Pick<Job, "id" | "kind">;
}

/** Folds `unfinished` (the service's unfinished jobs, in queue order) over its stored row. */
export function project(row: ServiceRow, unfinished: readonly Job[]): Projection {
  const p: Projection = { ip: row.ip, status: row.status, terminated: row.status === "terminated", terminating: false };
  for (const job of unfinished) {
    const payload = (job.payload ?? {}) as { ip?: unknown; reactivate?: unknown };
    switch (job.kind) {
      case JOB_KINDS.changeIp:
        if (typeof payload.ip === "string") p.ip = payload.ip;
        break;
      case JOB_KINDS.terminate:
        p.terminated = p.terminating = true;
        p.status = "terminated";
        p.decidedBy = job;
        break;
      case JOB_KINDS.register:
        // An order of a terminated service starts it again; a first order makes it active.
        if (payload.reactivate === true) p.terminated = p.terminating = false;
        if (p.status === "pending" || p.status === "failed" || payload.reactivate === true) {
          p.status = "active";
          p.decidedBy = job;
        }
        break;
      case JOB_KINDS.suspend:
      case JOB_KINDS.unsuspend:
        if (p.status === "active" || p.status === "suspended") {
          p.status = job.kind === JOB_KINDS.suspend ? "suspended" : "active";
          p.decidedBy = job;
        }
        break;
    }
  }
  return p;
}

/** The jobs of `unfinished` queued after `job`: what is accepted for the service but not applied when `job` runs. */
export function queuedBehind(unfinished: readonly Job[], job: Pick<Job, "id">): Job[] {
  return unfinished.filter((j) => j.id > job.id);
}
