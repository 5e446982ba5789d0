import type { Job } from "../vocabulary/jobs.js";
import { JOB_KINDS } from "../vocabulary/job-kinds.js";
import { InsufficientBalanceError, ResellerError } from "../reseller/errors.js";
import { ALERT_JOB_KIND, type Alerts } from "./alerts.js";

/** Episode keys that stand for the whole account, not one job. */
export const BALANCE_ALERT = "balance";
export const TOKEN_ALERT = "token";

/** The episode of one term whose renewal has not gone through a day before the term ends. */
export function renewalAtRiskAlert(renewalKey: string): string {
  return `renewal-at-risk:${renewalKey}`;
}

/** What a stopped job means for the operator, as an alert episode. */
export async function alertForStoppedJob(alerts: Alerts, job: Job, state: "failed" | "blocked", message: string, error: unknown): Promise<void> {
  const what = `${job.kind} job ${job.id}${job.serviceId ? ` (service ${job.serviceId})` : ""}`;
  if (error instanceof InsufficientBalanceError) {
    await alerts.raise(BALANCE_ALERT, "reseller balance too low: orders and renewals are waiting",
      `The reseller refused a purchase for insufficient balance (first: ${what}: ${message}). ` +
        "Top up the reseller account; blocked renewals retry by themselves, other blocked jobs need `jobs retry`.");
    return;
  }
  if (error instanceof ResellerError && (error.kind === "unauthorized" || error.kind === "forbidden")) {
    await alerts.raise(TOKEN_ALERT, "reseller token rejected: nothing can be provisioned",
      `The reseller rejected the configured token (first: ${what}: ${message}). Check RESELLER_API_TOKEN / RESELLER_LEGACY_TOKEN.`);
    return;
  }
  if (job.kind === ALERT_JOB_KIND) return; // An alert about alert mail would loop.
  await alerts.raise(`job-${state}:${job.id}`, `${what} ${state}`,
    state === "failed"
      ? `${what} failed for good after ${job.attempts} attempt(s): ${message}`
      : `${what} is blocked and waits for the operator: ${message}`);
}

/** A job that succeeded upstream shows the account-wide trouble is over. */
export async function resolveOnSuccess(alerts: Alerts, job: Job): Promise<void> {
  // One write for all: a failed job that an operator retried and that went through closes its own too.
  await alerts.resolve(
    ...(job.kind === JOB_KINDS.register || job.kind === JOB_KINDS.renew ? [BALANCE_ALERT] : []),
    ...(job.kind !== ALERT_JOB_KIND && job.kind !== JOB_KINDS.installMail && job.kind !== JOB_KINDS.recordPayment ? [TOKEN_ALERT] : []),
    `job-blocked:${job.id}`,
    `job-failed:${job.id}`,
    // The renewal of a term that was at risk went through: that episode is over too.
    ...(job.kind === JOB_KINDS.renew && job.uniqueKey ? [renewalAtRiskAlert(job.uniqueKey)] : []),
  );
}
