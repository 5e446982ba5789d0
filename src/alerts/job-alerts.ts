import type { Job } from "../jobs/types.js";
import { JOB_KINDS } from "../lifecycle/job-kinds.js";
import { InsufficientBalanceError, ResellerError } from "../reseller/errors.js";
import { ALERT_JOB_KIND, type Alerts } from "./alerts.js";

/** Episode keys that stand for the whole account, not one job. */
export const BALANCE_ALERT = "balance";
export const TOKEN_ALERT = "token";

/** What a stopped job means for the operator, as an alert episode. */
export function alertForStoppedJob(alerts: Alerts, job: Job, state: "failed" | "blocked", message: string, error: unknown): void {
  const what = `${job.kind} job ${job.id}${job.serviceId ? ` (service ${job.serviceId})` : ""}`;
  if (error instanceof InsufficientBalanceError) {
    alerts.raise(BALANCE_ALERT, "reseller balance too low: orders and renewals are waiting",
      `The reseller refused a purchase for insufficient balance (first: ${what}: ${message}). ` +
        "Top up the reseller account; blocked renewals retry by themselves, other blocked jobs need `jobs retry`.");
    return;
  }
  if (error instanceof ResellerError && (error.kind === "unauthorized" || error.kind === "forbidden")) {
    alerts.raise(TOKEN_ALERT, "reseller token rejected: nothing can be provisioned",
      `The reseller rejected the configured token (first: ${what}: ${message}). Check RESELLER_API_TOKEN / RESELLER_LEGACY_TOKEN.`);
    return;
  }
  if (job.kind === ALERT_JOB_KIND) return; // An alert about alert mail would loop.
  alerts.raise(`job-${state}:${job.id}`, `${what} ${state}`,
    state === "failed"
      ? `${what} failed for good after ${job.attempts} attempt(s): ${message}`
      : `${what} is blocked and waits for the operator: ${message}`);
}

/** A job that succeeded upstream shows the account-wide trouble is over. */
export function resolveOnSuccess(alerts: Alerts, job: Job): void {
  if (job.kind === JOB_KINDS.register || job.kind === JOB_KINDS.renew) alerts.resolve(BALANCE_ALERT);
  if (job.kind !== ALERT_JOB_KIND && job.kind !== JOB_KINDS.installMail && job.kind !== JOB_KINDS.recordPayment) alerts.resolve(TOKEN_ALERT);
  alerts.resolve(`job-blocked:${job.id}`);
  // A failed job that an operator retried and that went through.
  alerts.resolve(`job-failed:${job.id}`);
}
