import type { Job } from "../vocabulary/jobs.js";
import type { BalanceReading } from "../reseller/balance.js";
import { isOutdated, MIN_MODULE_VERSION, MODULE_VERSION } from "../provisioning/module-clients.js";
import type { HistoryRow, QueueState } from "../store/store.js";

export { licenseView } from "../store/store.js";

const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

export function historyView(h: HistoryRow) {
  return { at: iso(h.at), action: h.action, detail: h.detail, event_id: h.event_id, job_id: h.job_id };
}

export function jobView(j: Job) {
  return {
    id: j.id,
    kind: j.kind,
    service_id: j.serviceId,
    event_id: j.eventId,
    state: j.state,
    attempts: j.attempts,
    max_attempts: j.maxAttempts,
    last_error: j.lastError,
    skipped: j.skipped,
    run_at: iso(j.runAt),
    created_at: iso(j.createdAt),
    updated_at: iso(j.updatedAt),
  };
}

/** What `POST /admin/services/:id/resend-install-mail` answers: the job that sends the mail. */
export function queuedMailView(q: { jobId: number }) {
  return { job_id: q.jobId };
}

/** The panel modules recorded on services, and whether each is older than this bridge supports. */
export function modulesView(rows: { module: string; services: number }[]) {
  return {
    current_version: MODULE_VERSION,
    min_version: MIN_MODULE_VERSION,
    modules: rows.map((r) => {
      const [panel = r.module, version = ""] = r.module.split("/");
      return { module: r.module, panel, version, services: r.services, outdated: version !== "" && isOutdated(version) };
    }),
  };
}

/** The reseller balance of the bridge's own account, as GET /admin/balance answers it. */
export function balanceView(b: BalanceReading) {
  return { balance: b.balance, checked_at: iso(b.checkedAt), reason: b.reason };
}

/** How far the queue is behind, as GET /admin/queue answers it. */
export function queueView(q: QueueState) {
  const depth = Object.values(q.queued).reduce((a, b) => a + b, 0);
  return { depth, oldest_due_at: iso(q.oldestDueAt), lag_seconds: Math.floor(q.oldestDueAgeMs / 1000), queued_by_kind: q.queued };
}
