import type { Job } from "../vocabulary/jobs.js";
import type { EventOutcome, NewHistory } from "./ports/writes.js";

/**
 * The operator's cancel of a job: when the store allows it, in the transaction that writes it
 * (JobOps.cancel), and what it says and records. The words are the audit entry's, the admin API's
 * 409 and the CLI's line alike, so they stay with the rule on the store's floor, below every one
 * of them.
 */

/**
 * Why a job cannot be cancelled: there is no such job; it is not failed or blocked; or it
 * recorded a charge intent, so a charge may have happened upstream: only a retry (which checks
 * what the reseller holds before it buys) or a reconcile can tell.
 */
export type CancelRefusal = "unknown_job" | "not_stopped" | "charge_intent";

/** Why the job as it stands (a row, JSON intent and all) may not be cancelled, or undefined when it may. */
export function whyNotCancellable(job: { state: string; intent: unknown } | undefined): CancelRefusal | undefined {
  if (!job) return "unknown_job";
  if (job.state !== "failed" && job.state !== "blocked") return "not_stopped";
  return job.intent !== null ? "charge_intent" : undefined;
}

/** A cancel's refusal in words: the audit entry's detail, and the 409 or CLI line. */
export function cancelRefusalText(refused: CancelRefusal, job: Pick<Job, "id" | "state"> | undefined): string {
  switch (refused) {
    case "unknown_job":
      return "no such job";
    case "not_stopped":
      return `job ${job?.id} is ${job?.state}; only failed or blocked jobs can be cancelled`;
    case "charge_intent":
      return (
        `job ${job?.id} recorded a charge intent: a charge (or a licence reactivated, or one still to remove) may be at its provider, so it cannot be cancelled; ` +
        "retry it (the re-run checks what the provider holds before it acts) or reconcile"
      );
  }
}

/** What a cancel writes about the job's service: its history entry, and its event's outcome if none was recorded. */
export function cancelRecord(job: Pick<Job, "id" | "kind" | "state" | "lastError" | "eventId">, actor: string) {
  const why = `${job.kind} job ${job.id} cancelled by ${actor}`;
  return {
    history: { action: "job cancelled", detail: `${why}; it was ${job.state}${job.lastError ? `: ${job.lastError}` : ""}`, job_id: job.id, event_id: job.eventId } satisfies NewHistory,
    outcome: { outcome: "skipped" as const satisfies EventOutcome, detail: why },
  };
}
