import type { Alerts } from "../alerts/alerts.js";
import { renewalAtRiskAlert } from "../alerts/job-alerts.js";
import { JOB_KINDS } from "../vocabulary/job-kinds.js";
import type { Store } from "../store/store.js";
import { DAY_MS } from "./sweep.js";
import { renewalKey } from "../intake/jobs.js";
import { renewalDue } from "../intake/renewal-due.js";

/**
 * Blocked renewals come back by themselves at a modest interval, so a topped-up balance heals
 * the queue without the operator; attempts are not reset, so this never hides a failing job.
 */
export function healBlockedRenewals(store: Store, minIntervalMs: number): Promise<number> {
  return store.jobs.requeueBlocked(JOB_KINDS.renew, minIntervalMs);
}

/**
 * Paid, active licences whose term ends within a day and whose renewal for that term was tried
 * and has not succeeded: the operator hears of each once, before the customer does.
 */
export async function checkRenewalsAtRisk(store: Store, alerts: Alerts): Promise<number> {
  const rows = await store.renewals.atRisk(DAY_MS, (c) => (renewalDue(c).due ? renewalKey(c.service_id, c.expires_at) : undefined));
  for (const r of rows) {
    await alerts.raise(
      renewalAtRiskAlert(renewalKey(r.service_id, r.expires_at)),
      `renewal of service ${r.service_id} not done, term ends ${new Date(r.expires_at).toISOString()}`,
      `The licence of service ${r.service_id} (${r.ip}) ends ${new Date(r.expires_at).toISOString()}, less than a day away, ` +
        `and its renewal (job ${r.job_id}, ${r.state}) has not gone through: ${r.last_error ?? "no error recorded"}.`,
    );
  }
  return rows.length;
}
