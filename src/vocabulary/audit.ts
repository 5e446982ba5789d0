/**
 * The audit trail's words. An entry says who did what, when, on which service or job, and how it
 * ended; entries are written in the transaction of the change they record, never pruned.
 */

/**
 * - ok: the change was made;
 * - refused: the request was understood but the state did not allow it (a job neither failed nor
 *   blocked, a service that changed meanwhile); nothing changed;
 * - failed: it could not be carried out (the reseller unreachable, an upstream refusal).
 */
export const AUDIT_OUTCOMES = ["ok", "refused", "failed"] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/**
 * The actions written so far, `<thing>.<verb>`. A new mutating route or command adds its own
 * here (e.g. `adopt.apply`, `prune`), so the audit filter and the console can list them.
 */
export const AUDIT_ACTIONS = {
  /** POST /admin/jobs/:id/retry, `jobs retry`: one entry, the job's (refused when it is not failed or blocked). */
  jobRetry: "job.retry",
  /** POST /admin/jobs/:id/cancel, `jobs cancel`: one entry, the job's (refused when it is not failed or blocked, or may have charged). */
  jobCancel: "job.cancel",
  /** POST /admin/services/:id/resend-install-mail, `licenses resend-mail`: one entry with the mail job it queued. */
  serviceResendInstallMail: "service.resend_install_mail",
  /** POST /admin/services/:id/reset-ip-changes, `licenses reset-ip-changes`: one entry, written with the reset and its history entry. */
  serviceResetIpChanges: "service.reset_ip_changes",
  /** A reconcile with fix: one entry for the run (service_id null), with what it fixed and left. */
  reconcileFix: "reconcile.fix",
  /** One service repaired by reconcile --fix, written with the repair. */
  reconcileRepair: "reconcile.repair",
  /** POST /admin/adopt with apply, `adopt --apply`: one entry per service written, in its batch's transaction. */
  adoptApply: "adopt.apply",
  /** `renew --due`: one entry per renewal job it queued, with the job. */
  renewDue: "renew.due",
  /** `prune` (not --dry-run): one entry for the run, with what it removed (the daily prune is the service's own, not an operator's). */
  prune: "prune",
  /** `reseller credit`, `reseller create`, `sub-resellers create`, `sub-resellers credit`: money and accounts upstream. */
  resellerCredit: "reseller.credit",
  resellerCreate: "reseller.create",
  subResellerCreate: "sub_reseller.create",
  subResellerCredit: "sub_reseller.credit",
} as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[keyof typeof AUDIT_ACTIONS];

/**
 * The longest each text of an entry is kept: a service id as the intake takes one, an actor and
 * an action as the audit filters take them, and room for a detail to say why. The ways in refuse
 * an id over its limit (422) before anything is written; this is the trail's own bound, so that
 * nothing written by a path that forgot to check grows it at will.
 */
export const AUDIT_TEXT_LIMITS = { actor: 200, action: 64, service_id: 64, detail: 2000 } as const;

/**
 * `text` cut to `max` characters, its last one "…": a cut id shows it was cut, and can never be
 * taken for a service's (no id holds "…"). A surrogate pair is never split.
 */
export function cutToLimit(text: string, max: number): string {
  if (text.length <= max) return text;
  const kept = text.slice(0, max - 1);
  return `${/[\uD800-\uDBFF]$/.test(kept) ? kept.slice(0, -1) : kept}…`;
}

/** An entry's texts within AUDIT_TEXT_LIMITS, as both stores write it. */
export function boundedEntry<E extends { actor: string; action: string; service_id?: string | null; detail?: string | null }>(e: E): E {
  const L = AUDIT_TEXT_LIMITS;
  return {
    ...e,
    actor: cutToLimit(e.actor, L.actor),
    action: cutToLimit(e.action, L.action),
    ...(typeof e.service_id === "string" ? { service_id: cutToLimit(e.service_id, L.service_id) } : {}),
    ...(typeof e.detail === "string" ? { detail: cutToLimit(e.detail, L.detail) } : {}),
  };
}
