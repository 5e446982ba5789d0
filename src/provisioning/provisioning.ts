import { randomUUID } from "node:crypto";
import type { z } from "zod";
import { fieldErrors, type BillingEvent } from "../intake/event-schema.js";
import type { Intake } from "../intake/intake.js";
import type { JobOps, ServiceOps, ServiceRow } from "../store/store.js";
import { JOB_KINDS } from "../vocabulary/job-kinds.js";
import { invalid, pendingAsError, refusal, unknownService, type Answer } from "./answers.js";
import { changeIpParams, changePackageParams, createParams, derivedServiceIdentifier, onPendingParam, paramOf, renewParams, targetParams, type TargetParams } from "./params.js";
import { datelessRenewalId } from "./retries.js";
import type { outcomeWaiter } from "./wait.js";

export const PROVISIONING_CALLS = ["create", "suspend", "unsuspend", "terminate", "renew", "change-ip", "change-package", "info"] as const;
export type ProvisioningCall = (typeof PROVISIONING_CALLS)[number];
type WorkCall = Exclude<ProvisioningCall, "info">;

export interface ProvisioningDeps {
  /** The intake every way in uses: it decides the call's event (decide.ts) and stores it before any work. */
  accept: Intake;
  services: Pick<ServiceOps, "get" | "byLicenseKey">;
  jobs: Pick<JobOps, "list" | "unfinished">;
  /** Waits for a job and answers with its outcome (wait.ts). */
  outcome: ReturnType<typeof outcomeWaiter>;
  /** The licence as a 200 (answers.ts). */
  license(svc: ServiceRow): Promise<Answer>;
  now?: () => number;
}

/** The job kind each call queues: a repeated call re-runs a job of its own kind that is blocked. */
const KIND_OF: Record<WorkCall, string> = {
  create: JOB_KINDS.register,
  suspend: JOB_KINDS.suspend,
  unsuspend: JOB_KINDS.unsuspend,
  terminate: JOB_KINDS.terminate,
  renew: JOB_KINDS.recordPayment,
  "change-ip": JOB_KINDS.changeIp,
  "change-package": JOB_KINDS.changeProduct,
};

/**
 * The provisioning API (service-contract.md section 8): each call's parameters become the event a
 * webhook would carry; the deciding core (src/intake/) decides it; the call waits for the job that
 * carries it and answers with the outcome. Nothing is decided here.
 */
export function createProvisioning(deps: ProvisioningDeps) {
  const now = deps.now ?? Date.now;

  const parse = <S extends z.ZodType>(schema: S, params: Record<string, unknown>): { ok: true; value: z.output<S> } | { ok: false; answer: Answer } => {
    const r = schema.safeParse(params);
    return r.success ? { ok: true, value: r.data } : { ok: false, answer: invalid(fieldErrors(r.error, "(parameters)")) };
  };

  /** The parameters, checked, and the service they name (license_key, or the panel's id; both: the same one). */
  const located = async <S extends z.ZodType<TargetParams>>(schema: S, params: Record<string, unknown>) => {
    const p = parse(schema, params);
    if (!p.ok) return p;
    const t = p.value;
    const svc = t.license_key !== undefined ? await deps.services.byLicenseKey(t.license_key) : await deps.services.get(t.service_identifier!);
    if (!svc || (t.service_identifier !== undefined && t.service_identifier !== svc.service_id)) return { ok: false as const, answer: unknownService() };
    return { ok: true as const, value: p.value, svc, keyParam: (t.license_key !== undefined ? "license_key" : "service_identifier") as "license_key" | "service_identifier" };
  };

  /** Stores the call's event through the intake, and answers with the outcome of the job that carries it. */
  const submit = async (call: WorkCall, event: BillingEvent, keyParam: "license_key" | "service_identifier", webhookId = `prov:${randomUUID()}`): Promise<Answer> => {
    const [result] = await deps.accept("provisioning", [{ webhookId, event }]);
    switch (result!.status) {
      case "invalid": {
        // The core names event fields; a refusal names the parameter the panel sent.
        const errors: Record<string, string[]> = {};
        for (const [path, messages] of Object.entries(result!.errors)) (errors[paramOf(path, keyParam)] ??= []).push(...messages);
        return invalid(errors, result!.code);
      }
      case "unknown_service":
        return unknownService();
      case "retry_later":
        return refusal(409, "retry_later", result!.reason);
      case "duplicate":
        return deps.outcome(event.service.id, result!.jobId, KIND_OF[call]);
      case "accepted":
        return deps.outcome(event.service.id, result!.jobId ?? result!.answerFor, KIND_OF[call]);
    }
  };

  const target = (schema: typeof targetParams, call: WorkCall, type: BillingEvent["type"]) => async (params: Record<string, unknown>) => {
    const p = await located(schema, params);
    return p.ok ? submit(call, { type, service: { id: p.svc.service_id } }, p.keyParam) : p.answer;
  };

  const calls: Record<ProvisioningCall, (params: Record<string, unknown>) => Promise<Answer>> = {
    async create(params) {
      const p = parse(createParams, params);
      if (!p.ok) return p.answer;
      const v = p.value;
      const customer = v.customer_email ? { customer: { email: v.customer_email, ...(v.customer_name ? { name: v.customer_name } : {}) } } : {};
      const service = { id: v.service_identifier ?? derivedServiceIdentifier(v), product_id: v.package_identifier, billing_cycle: v.billing_cycle, ip: v.ip, ...customer };
      return submit("create", { type: "service.created", service: { ...service, ...(v.next_due_date ? { next_due_date: v.next_due_date } : {}) } }, "service_identifier");
    },
    suspend: target(targetParams, "suspend", "service.suspended"),
    unsuspend: target(targetParams, "unsuspend", "service.unsuspended"),
    terminate: target(targetParams, "terminate", "service.terminated"),

    async renew(params) {
      const p = await located(renewParams, params);
      if (!p.ok) return p.answer;
      const { svc, value } = p;
      if (value.next_due_date) return submit("renew", { type: "service.renewed", service: { id: svc.service_id, next_due_date: value.next_due_date } }, p.keyParam);
      return submit("renew", { type: "service.renewed", service: { id: svc.service_id } }, p.keyParam, await datelessRenewalId(deps.jobs, svc, now()));
    },

    async "change-ip"(params) {
      const p = await located(changeIpParams, params);
      if (!p.ok) return p.answer;
      return submit("change-ip", { type: "service.ip_changed", service: { id: p.svc.service_id, ip: p.svc.ip }, changes: { ip: p.value.new_ip } }, p.keyParam);
    },

    async "change-package"(params) {
      const p = await located(changePackageParams, params);
      if (!p.ok) return p.answer;
      const event: BillingEvent = { type: "service.product_changed", service: { id: p.svc.service_id, product_id: p.svc.product_id }, changes: { product_id: p.value.package_identifier } };
      return submit("change-package", event, p.keyParam);
    },

    async info(params) {
      const p = await located(targetParams, params);
      return p.ok ? deps.license(p.svc) : p.answer;
    },
  };

  return {
    async call(name: ProvisioningCall, params: Record<string, unknown>): Promise<Answer> {
      const how = parse(onPendingParam, params);
      if (!how.ok) return how.answer;
      const answer = await calls[name](params);
      if (answer.status !== 202 || how.value.on_pending !== "error") return answer;
      return pendingAsError(answer, (await deps.services.byLicenseKey(String(answer.body.license_key)))?.service_id);
    },
  };
}

export type Provisioning = ReturnType<typeof createProvisioning>;
