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
