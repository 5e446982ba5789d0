import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { Intake } from "../intake/intake.js";
import { billingEventSchema, fieldErrors } from "../intake/event-schema.js";
import type { Logger } from "../log/logger.js";
import { LicenceListError, reconcile, type ReconcileDeps, type ReconcileResult } from "../reconcile/reconcile.js";
import { ResellerError } from "../reseller/errors.js";
import type { AuditDraft, Store } from "../store/store.js";
import { AUDIT_ACTIONS } from "../vocabulary/audit.js";
import { reconcileSummary } from "./reconcile-summary.js";
import type { Job } from "../vocabulary/jobs.js";
import { cancelJob, resendInstallMail, resetIpChanges, type ActionOutcome, type QueuedMail } from "./direct-actions.js";
import type { ServiceRow } from "../store/store.js";
import { roleAllows, type Actor, type Role } from "../vocabulary/roles.js";
import { withArticle } from "../vocabulary/text.js";
import { serviceIdProblem } from "./ids.js";

/**
 * Every change an operator can make, as one function `(actor, params) => outcome` that the admin
 * API's route and the console's form both call: the role check is here, and the audit entry
 * (issue 26, operators-audit) is written here, once, whichever way the operator came in.
 */

export type { ActionOutcome, QueuedMail } from "./direct-actions.js";

/** What an operator's licence action queued: its event and job, or why it needed none. */
export interface LicenceActionResult {
  event_id: string;
  job_id: number | null;
  nothing_to_do: string | null;
}

/** The role each action needs (src/vocabulary/roles.ts says what each role means). */
export const ACTION_ROLES = {
  retryJob: "operator",
  cancelJob: "operator",
  suspend: "operator",
  unsuspend: "operator",
  changeIp: "operator",
  resendInstallMail: "operator",
  resetIpChanges: "operator",
  reconcile: "operator",
  reconcileFix: "admin",
  adopt: "admin",
} as const satisfies Record<string, Role>;
export type ActionName = keyof typeof ACTION_ROLES;

export interface AdminActions {
  retryJob(actor: Actor, params: { id: number }): Promise<ActionOutcome<Job>>;
  cancelJob(actor: Actor, params: { id: number }): Promise<ActionOutcome<Job>>;
  suspend(actor: Actor, params: { serviceId: string }): Promise<ActionOutcome<LicenceActionResult>>;
  unsuspend(actor: Actor, params: { serviceId: string }): Promise<ActionOutcome<LicenceActionResult>>;
  changeIp(actor: Actor, params: { serviceId: string; ip: string }): Promise<ActionOutcome<LicenceActionResult>>;
  /** `requestId`: the same one again answers the mail it queued (a form posted twice, a call retried). */
  resendInstallMail(actor: Actor, params: { serviceId: string; requestId?: string }): Promise<ActionOutcome<QueuedMail>>;
  resetIpChanges(actor: Actor, params: { serviceId: string }): Promise<ActionOutcome<ServiceRow>>;
  reconcile(actor: Actor, params: { fix: boolean }): Promise<ActionOutcome<ReconcileResult>>;
}

export interface AdminActionDeps {
  store: Store;
  /** The intake (the deciding core) a licence action enters by, as a panel's event would. */
  accept: Intake;
  reconcile: ReconcileDeps;
  logger?: Logger;
}

/** The body of `POST /admin/services/:id/change-ip`. */
export const changeIpBodySchema = z.strictObject({
  ip: z
    .string({ error: (issue) => (issue.input === undefined ? "is required: the new IP address" : "must be a string: the new IP address, e.g. \"203.0.113.10\"") })
    .max(64, { error: "must be at most 64 characters: an IPv4 or IPv6 address" }),
});

/** The intake's source of the events operators make: its own namespace of webhook ids. */
export const OPERATOR_SOURCE = "operator";

/** The audit action a refusal of each action is recorded under (as the admin API's door records its routes'). */
const REFUSED_AS: Record<ActionName, string> = {
  retryJob: AUDIT_ACTIONS.jobRetry,
  cancelJob: AUDIT_ACTIONS.jobCancel,
  suspend: "service.suspend",
  unsuspend: "service.unsuspend",
  changeIp: "service.change_ip",
  resendInstallMail: AUDIT_ACTIONS.serviceResendInstallMail,
  resetIpChanges: AUDIT_ACTIONS.serviceResetIpChanges,
  reconcile: AUDIT_ACTIONS.reconcileFix,
  reconcileFix: AUDIT_ACTIONS.reconcileFix,
  adopt: AUDIT_ACTIONS.adoptApply,
};

/**
 * An action the actor's role does not allow: 403, and a `refused` entry naming them. The admin
 * API's door refuses (and records) before a route calls an action, so what reaches this is the
 * console's or the CLI's attempt, recorded here once.
 */
export async function refuse(
  audit: Pick<Store["audit"], "record">,
  actor: Actor,
  action: ActionName,
  about: { service_id?: string | null; job_id?: number | null } = {},
): Promise<ActionOutcome<never>> {
  const message = `${actor.name} is ${withArticle(actor.role)}; ${action} needs the ${ACTION_ROLES[action]} role`;
  await audit.record({ actor: actor.name, action: REFUSED_AS[action], service_id: about.service_id ?? null, job_id: about.job_id ?? null, outcome: "refused", detail: `forbidden: ${message}` });
  return { ok: false, status: 403, code: "forbidden", message };
}

/** Whether `actor` may take `action` (the console hides what this refuses; the action refuses it anyway). */
export const mayAct = (actor: Actor, action: ActionName) => roleAllows(actor.role, ACTION_ROLES[action]);

/** The audit entry's who and what for `actor` (written by the store in the change's own transaction). */
const draftOf = (actor: Actor & { via?: string }, action: string): AuditDraft => ({ actor: actor.name, action, ...(actor.via ? { detail: actor.via } : {}) });

/** The audit action of each licence action. */
const LICENCE_AUDIT = { suspend: "service.suspend", unsuspend: "service.unsuspend", changeIp: "service.change_ip" } as const;

/**
 * A service id no service can have (the intake's rule: at most 64 letters, digits and . _ : -):
 * 422 naming `id`, before the role is checked, so that it is refused alike for everyone and
 * never written into an entry.
 */
function badServiceId(serviceId: string): ActionOutcome<never> | undefined {
  const errors = serviceIdProblem(serviceId);
  return errors ? { ok: false, status: 422, code: "validation", message: "Validation error", errors } : undefined;
}

export function adminActions(deps: AdminActionDeps): AdminActions {
  const { store } = deps;
  /** A refusal's entry names a service only if the bridge knows it: an unknown id may be anything a client typed (a token pasted in the wrong place). */
  const knownOrNull = async (serviceId: string | null | undefined) => (serviceId && (await store.services.get(serviceId)) !== undefined ? serviceId : null);
  const forbidden = async (actor: Actor, action: ActionName, about: { service_id?: string | null; job_id?: number | null } = {}) =>
    refuse(store.audit, actor, action, { ...about, service_id: await knownOrNull(about.service_id) });
  // One reconcile at a time: two repairs of the same drift would suspend twice and write history twice.
  let reconciling = false;

  /** An operator's change to a licence is an event like a panel's, decided by the one deciding core. */
  const licenceEvent = async (actor: Actor, action: ActionName, raw: { type: string; service: { id: string }; changes?: { ip: string } }): Promise<ActionOutcome<LicenceActionResult>> => {
    const bad = badServiceId(raw.service.id);
    if (bad) return bad;
    if (!mayAct(actor, action)) return forbidden(actor, action, { service_id: raw.service.id });
    const parsed = billingEventSchema.safeParse(raw);
    if (!parsed.success) return { ok: false, status: 422, code: "validation", message: "Validation error", errors: fieldErrors(parsed.error) };
    // The operator's name in the webhook id: the event row says who made it until the audit trail does.
    const draft = draftOf(actor, LICENCE_AUDIT[action as keyof typeof LICENCE_AUDIT]);
    // Accepted: the entry (ok, with its job) is committed with the event. Refused: nothing changed, the entry says so.
    const [r] = await deps.accept(OPERATOR_SOURCE, [{ webhookId: `${actor.name}:${randomUUID()}`, event: parsed.data, audit: draft }]);
    if (r!.status !== "accepted") await store.audit.record({ ...draft, service_id: r!.status === "unknown_service" ? null : await knownOrNull(parsed.data.service.id), outcome: "refused" });
    switch (r!.status) {
      case "accepted":
        return { ok: true, value: { event_id: r!.eventId, job_id: r!.jobId ?? null, nothing_to_do: r!.nothingToDo ?? null } };
      case "unknown_service":
        return { ok: false, status: 404, code: "unknown_service", message: "unknown service" };
      case "invalid":
        return { ok: false, status: 422, code: r!.code, message: Object.values(r!.errors).flat().join("; ") || "refused", errors: r!.errors };
      case "retry_later":
        return { ok: false, status: 409, code: "retry_later", message: r!.reason };
      case "duplicate":
        return { ok: false, status: 409, code: "conflict", message: "already taken" };
    }
  };

  return {
    async retryJob(actor, { id }) {
      if (!mayAct(actor, "retryJob")) return forbidden(actor, "retryJob", { job_id: id });
      const job = await store.jobs.get(id);
      // The retry and its entry (ok, or refused: no such job, or not failed or blocked) commit together.
      const retried = await store.jobs.retry(id, draftOf(actor, AUDIT_ACTIONS.jobRetry));
      if (!job) return { ok: false, status: 404, code: "unknown_job", message: "unknown job" };
      if (!retried) return { ok: false, status: 409, code: "conflict", message: `job ${id} is ${job.state}; only failed or blocked jobs can be retried` };
      return { ok: true, value: retried };
    },
    async cancelJob(actor, { id }) {
      if (!mayAct(actor, "cancelJob")) return forbidden(actor, "cancelJob", { job_id: id });
      // The cancel and its entry (ok, or refused saying why) commit together.
      return cancelJob(store, draftOf(actor, AUDIT_ACTIONS.jobCancel), id);
    },
    suspend: (actor, { serviceId }) => licenceEvent(actor, "suspend", { type: "service.suspended", service: { id: serviceId } }),
    unsuspend: (actor, { serviceId }) => licenceEvent(actor, "unsuspend", { type: "service.unsuspended", service: { id: serviceId } }),
    changeIp: (actor, { serviceId, ip }) => licenceEvent(actor, "changeIp", { type: "service.ip_changed", service: { id: serviceId }, changes: { ip } }),
    async resendInstallMail(actor, params) {
      const bad = badServiceId(params.serviceId);
      if (bad) return bad;
      if (!mayAct(actor, "resendInstallMail")) return forbidden(actor, "resendInstallMail", { service_id: params.serviceId });
      return resendInstallMail(store, draftOf(actor, AUDIT_ACTIONS.serviceResendInstallMail), params);
    },
    async resetIpChanges(actor, { serviceId }) {
      const bad = badServiceId(serviceId);
      if (bad) return bad;
      if (!mayAct(actor, "resetIpChanges")) return forbidden(actor, "resetIpChanges", { service_id: serviceId });
      return resetIpChanges(store, draftOf(actor, AUDIT_ACTIONS.serviceResetIpChanges), serviceId);
    },
    async reconcile(actor, { fix }) {
      if (!mayAct(actor, fix ? "reconcileFix" : "reconcile")) return forbidden(actor, fix ? "reconcileFix" : "reconcile");
      if (reconciling) return { ok: false, status: 409, code: "conflict", message: "a reconcile is already running; try again when it has finished" };
      reconciling = true;
      // A repair writes an entry per service it repairs (with the repair) and one for the run.
      const audit = fix ? draftOf(actor, AUDIT_ACTIONS.reconcileRepair) : undefined;
      try {
        const result = await reconcile(deps.reconcile, { fix, audit });
        if (audit) await store.audit.record({ ...audit, action: AUDIT_ACTIONS.reconcileFix, outcome: "ok", detail: reconcileSummary(result) });
        return { ok: true, value: result };
      } catch (err) {
        if (audit) await store.audit.record({ ...audit, action: AUDIT_ACTIONS.reconcileFix, outcome: "failed", detail: (err as Error).message });
        if (err instanceof LicenceListError) {
          deps.logger?.warn({ err, provider: err.source.provider }, "reconcile: a provider's licence list is unavailable");
          return { ok: false, status: 502, code: "upstream_unavailable", message: err.message };
        }
        if (!(err instanceof ResellerError)) throw err;
        deps.logger?.warn({ err }, "reconcile: the reseller's licence list is unavailable");
        return { ok: false, status: 502, code: "upstream_unavailable", message: `cannot read the reseller's licence list: ${err.message}` };
      } finally {
        reconciling = false;
      }
    },
  };
}
