import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { FieldErrors } from "../intake/event-schema.js";
import { INSTALL_MAIL } from "../intake/jobs.js";
import { jobOf } from "../jobs/define.js";
import { cancelRefusalText, type AuditDraft, type ServiceRow, type Store } from "../store/store.js";
import type { ErrorCode } from "../vocabulary/error-codes.js";
import type { Job } from "../vocabulary/jobs.js";

/**
 * The operator's actions that are one store operation each, not an event for the deciding core:
 * cancel a job, send the install mail again, reset the IP-change counter. The change and its
 * audit entry commit together in the store; what is refused, and in which words, is decided
 * here once for the admin API, the console (both through src/admin/actions.ts, which checks the
 * role) and the CLI (which checks it with requireRole).
 */

/** How an action ended: its value, or a refusal with the status and code the admin API answers. */
export type ActionOutcome<T> =
  | { ok: true; value: T }
  | { ok: false; status: number; code: ErrorCode; message: string; errors?: FieldErrors };

const unknownService: ActionOutcome<never> = { ok: false, status: 404, code: "unknown_service", message: "unknown service" };

/** A failed or blocked job with no charge intent, cancelled: 404 for no such job, 409 otherwise (the message says why). */
export async function cancelJob(store: Pick<Store, "jobs">, draft: AuditDraft, id: number): Promise<ActionOutcome<Job>> {
  const r = await store.jobs.cancel(id, draft);
  if ("cancelled" in r) return { ok: true, value: r.cancelled };
  if (r.refused === "unknown_job") return { ok: false, status: 404, code: "unknown_job", message: "unknown job" };
  return { ok: false, status: 409, code: "conflict", message: cancelRefusalText(r.refused, r.job) };
}

const REQUEST_ID_RULE = "must be 8 to 64 letters, digits, - or _";

/** The body of `POST /admin/services/:id/resend-install-mail` (none is fine). */
export const resendMailBodySchema = z.strictObject({
  request_id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{8,64}$/, { error: REQUEST_ID_RULE })
    .optional()
    .describe("Makes the request idempotent: the same request_id again answers the mail it queued, and queues no second one. Without it, every request queues a mail"),
});

/** What a resend queued: the mail's job, and whether this request queued it (false: the same request_id came before). */
export interface QueuedMail {
  jobId: number;
  created: boolean;
  to: string;
}

/** Why the install mail cannot go out again for the service as it is. */
function mailRefusal(svc: ServiceRow): { code: ErrorCode; message: string } | undefined {
  if (svc.status !== "active") return { code: "service_not_active", message: `service ${svc.service_id} is ${svc.status}: the install mail is sent again only for an active licence` };
  if (!svc.customer_email) return { code: "no_customer_email", message: `service ${svc.service_id} has no customer e-mail address to send the install mail to` };
  return undefined;
}

/**
 * A fresh install-mail job for an active licence with a customer e-mail: its own mail record and
 * Message-ID (the job has no event, so the mail is keyed by the job), sent however often the
 * order's mail was. 404 for an unknown service, 422 (service_not_active, no_customer_email) when
 * it does not apply.
 */
export async function resendInstallMail(
  store: Pick<Store, "services">,
  draft: AuditDraft,
  params: { serviceId: string; requestId?: string },
): Promise<ActionOutcome<QueuedMail>> {
  const r = await store.services.queueForOperator(params.serviceId, {
    job: jobOf(INSTALL_MAIL, { resend: params.requestId ?? randomUUID() }, { serviceId: params.serviceId }),
    history: { action: "install mail resend", detail: `the install mail queued again by ${draft.actor}` },
    audit: draft,
    refuse: mailRefusal,
  });
  switch (r.status) {
    case "unknown_service":
      return unknownService;
    case "refused":
      return { ok: false, status: 422, code: r.refusal.code, message: r.refusal.message };
    case "queued":
      return { ok: true, value: { jobId: r.jobId, created: r.created, to: r.service.customer_email ?? "" } };
  }
}

/** The service's IP-change counter set back to 0, with its history and audit entries: the service as it is now, or 404. */
export async function resetIpChanges(store: Pick<Store, "services">, draft: AuditDraft, serviceId: string): Promise<ActionOutcome<ServiceRow>> {
  const svc = await store.services.resetIpChanges(serviceId, draft);
  return svc ? { ok: true, value: svc } : unknownService;
}
