import { randomUUID } from "node:crypto";
import type { z } from "zod";
import type { Catalog } from "../catalog/catalog.js";
import type { ErrorCode } from "../vocabulary/error-codes.js";
import type { Job } from "../vocabulary/jobs.js";
import { JOB_KINDS, serviceQueueKey } from "../vocabulary/job-kinds.js";
import { licenceTypes } from "../lifecycle/targets.js";
import type { Logger } from "../log/logger.js";
import type { ProductType } from "../vocabulary/products.js";
import type { JobOps, ServiceOps, ServiceRow } from "../store/store.js";
import { fieldErrors, type BillingEvent, type FieldErrors } from "../intake/event-schema.js";
import type { Intake as AcceptEvents } from "../intake/intake.js";
import { project } from "../intake/projection.js";
import { isSettled, type JobWaiter } from "../jobs/waiter.js";
import {
  changeIpParams,
  changePackageParams,
  createParams,
  derivedServiceIdentifier,
  onPendingParam,
  paramOf,
  renewParams,
  targetParams,
  type TargetParams,
} from "./params.js";

export const PROVISIONING_CALLS = ["create", "suspend", "unsuspend", "terminate", "renew", "change-ip", "change-package", "info"] as const;
export type ProvisioningCall = (typeof PROVISIONING_CALLS)[number];

/** A 200's body: the licence as a panel's client area shows it. */
export interface ProvisionedLicence {
  success: true;
  /** The bridge's stable name of the licence, returned by create and accepted by every other call. */
  license_key: string;
  service_identifier: string;
  package_identifier: string;
  status: ServiceRow["status"];
  ip: string;
  type: string | null;
  variant: string | null;
  bundle: string | null;
  expires_at: string | null;
  paid_until: string | null;
  install_command: string | null;
  ip_changes_left: number | null;
  last_error: string | null;
}

/** What the HTTP layer sends back: a status and a JSON body. */
export interface Answer {
  status: number;
  body: Record<string, unknown>;
  /** Sent as Retry-After (a pending call answered as an error). */
  retryAfterSeconds?: number;
}

export interface ProvisioningDeps {
  /** The intake, exactly as the webhooks use it: the call's event is stored durably before any work. */
  accept: AcceptEvents;
  services: Pick<ServiceOps, "get" | "byLicenseKey">;
  jobs: Pick<JobOps, "get" | "unfinished" | "retry" | "list">;
  waiter: JobWaiter;
  catalog: Catalog;
  /** PROVISION_WAIT_SECONDS in ms. */
  waitMs: number;
  /** The licence's install command from the reseller (a read; not counted against WORKER_CONCURRENCY). */
  installCommand(ip: string, type: ProductType): Promise<string>;
  logger: Logger;
  now?: () => number;
}

/** The job kind each call queues: a repeated call re-runs a job of its own kind that is blocked. */
const KIND_OF: Record<Exclude<ProvisioningCall, "info">, string> = {
  create: JOB_KINDS.register,
  suspend: JOB_KINDS.suspend,
  unsuspend: JOB_KINDS.unsuspend,
  terminate: JOB_KINDS.terminate,
  renew: JOB_KINDS.recordPayment,
  "change-ip": JOB_KINDS.changeIp,
  "change-package": JOB_KINDS.changeProduct,
};

/**
 * The status the service will have once its unfinished jobs are applied, as far as suspend and
 * unsuspend can tell; undefined while a purchase or another job could leave it anything else.
 */
function statusAfter(svc: ServiceRow, unfinished: readonly Job[]): ServiceRow["status"] | undefined {
  let status: ServiceRow["status"] | undefined = svc.status;
  for (const job of unfinished) {
    if (job.kind === JOB_KINDS.suspend) status = status === "active" || status === "suspended" ? "suspended" : undefined;
    else if (job.kind === JOB_KINDS.unsuspend) status = status === "active" || status === "suspended" ? "active" : undefined;
    else if (job.kind === JOB_KINDS.terminate || job.kind === JOB_KINDS.register) status = undefined;
  }
  return status;
}

/**
 * How long after the last dateless renewal ended a dateless `renew` is taken for the same call
 * made again. Retries (a timeout, a 202's re-run, a second click, a panel's next task run) come
 * within minutes or hours; the next real payment of the shortest cycle comes a month later. A
 * day covers the first and stays far from the second; two dateless payments within a day are
 * recorded once (panels that know the due date send next_due_date and are not affected).
 */
const RENEW_REPEAT_WINDOW_MS = 24 * 60 * 60_000;

const hasDueDate = (job: Job) => typeof (job.payload as { next_due_date?: unknown } | null)?.next_due_date === "string";

/** The latest of `jobs` that does what `call` does. */
const lastOfCall = (jobs: readonly Job[], call: Exclude<ProvisioningCall, "info">) => jobs.findLast((j) => j.kind === KIND_OF[call]);

/** What a pending call answered as an error suggests: the wait of one more PROVISION_WAIT_SECONDS, about. */
const PENDING_RETRY_AFTER_SECONDS = 30;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const INSTALL_COMMAND_TTL_MS = 5 * 60_000;

export function createProvisioning(deps: ProvisioningDeps) {
  const now = deps.now ?? Date.now;
  const commands = new Map<string, { command: string; at: number }>();

  /** The install command(s) of an active licence, one line per licence of a bundle; null when the reseller cannot say. */
  const installCommand = async (svc: ServiceRow): Promise<string | null> => {
    const lines: string[] = [];
    for (const type of licenceTypes(svc)) {
      const key = `${svc.ip}|${type}`;
      const cached = commands.get(key);
      if (cached && now() - cached.at < INSTALL_COMMAND_TTL_MS) {
        lines.push(cached.command);
        continue;
      }
      try {
        const command = (await deps.installCommand(svc.ip, type)).trim();
        if (!command) return null;
        commands.set(key, { command, at: now() });
        lines.push(command);
      } catch (err) {
        deps.logger.warn({ err, service_id: svc.service_id }, "provisioning: no install command from the reseller");
        return null;
      }
    }
    return lines.length ? lines.join("\n") : null;
  };

  const licence = async (svc: ServiceRow): Promise<Answer> => {
    const limit = deps.catalog.product(svc.product_id)?.maxIpChanges ?? null;
    const body: ProvisionedLicence = {
      success: true,
      license_key: svc.license_key,
      service_identifier: svc.service_id,
      package_identifier: svc.product_id,
      status: svc.status,
      ip: svc.ip,
      type: svc.type,
      variant: svc.variant,
      bundle: svc.bundle,
      expires_at: iso(svc.expires_at),
      paid_until: iso(svc.paid_until),
      install_command: svc.status === "active" ? await installCommand(svc) : null,
      ip_changes_left: limit === null ? null : Math.max(0, limit - svc.ip_changes),
      last_error: svc.last_error,
    };
    return { status: 200, body: { ...body } };
  };

  const refusal = (status: number, code: ErrorCode, error: string, extra: Record<string, unknown> = {}): Answer => ({
    status,
    body: { success: false, error, code, ...extra },
  });
  const invalid = (errors: FieldErrors, code: ErrorCode = "validation") => refusal(422, code, "Validation error", { errors });
  const unknown = () => refusal(404, "unknown_service", "unknown service");

  const parse = <S extends z.ZodType>(schema: S, params: Record<string, unknown>): { ok: true; value: z.output<S> } | { ok: false; answer: Answer } => {
    const r = schema.safeParse(params);
    return r.success ? { ok: true, value: r.data } : { ok: false, answer: invalid(fieldErrors(r.error, "(parameters)")) };
  };

  const find = async (t: TargetParams): Promise<ServiceRow | undefined> => {
    if (t.license_key !== undefined) {
      const svc = await deps.services.byLicenseKey(t.license_key);
      // Both given: they must name the same service.
      return svc && (t.service_identifier === undefined || t.service_identifier === svc.service_id) ? svc : undefined;
    }
    return deps.services.get(t.service_identifier!);
  };

  /** The parameters, checked, and the service they name: or the answer refusing them (422, 404). */
  const located = async <S extends z.ZodType<TargetParams>>(
    schema: S,
    params: Record<string, unknown>,
  ): Promise<{ ok: true; value: z.output<S>; svc: ServiceRow } | { ok: false; answer: Answer }> => {
    const p = parse(schema, params);
    if (!p.ok) return p;
    const svc = await find(p.value);
    return svc ? { ok: true, value: p.value, svc } : { ok: false, answer: unknown() };
  };

  /**
   * Stores the event as a webhook would and waits (up to PROVISION_WAIT_SECONDS) for the call's
   * own work: the job the event queued; for an event stored before (a deterministic webhook id
   * seen again), that event's job; when it queued none (a create for a service that has its
   * licence), the job of the same kind an earlier call left under way.
   */
  const submit = async (
    call: Exclude<ProvisioningCall, "info">,
    event: BillingEvent,
    keyParam: "license_key" | "service_identifier",
    webhookId = `prov:${randomUUID()}`,
  ): Promise<Answer> => {
    const [result] = await deps.accept("provisioning", [{ webhookId, event }]);
    switch (result!.status) {
      case "invalid": {
        const errors: FieldErrors = {};
        for (const [path, messages] of Object.entries(result!.errors)) (errors[paramOf(path, keyParam)] ??= []).push(...messages);
        return invalid(errors, result!.code);
      }
      case "unknown_service":
        return unknown();
      case "retry_later":
        return refusal(409, "retry_later", result!.reason);
      case "duplicate":
      case "accepted":
        break;
    }
    const serviceId = event.service.id;
    if (result!.status === "accepted" && result!.jobId !== undefined) return outcome(call, serviceId, result!.jobId);
    if (result!.status === "duplicate") return outcome(call, serviceId, (await jobOfEvent(serviceId, call, result!.eventId))?.id);
    return outcome(call, serviceId, (await underWay(serviceId, call))?.id);
  };

  /** The job an event stored earlier queued (a duplicate's work is the first call's). */
  const jobOfEvent = async (serviceId: string, call: Exclude<ProvisioningCall, "info">, eventId: string): Promise<Job | undefined> =>
    (await deps.jobs.list({ serviceId, kind: KIND_OF[call], limit: 20 })).find((j) => j.eventId === eventId);

  /** The service's unfinished jobs, in queue order. */
  const unfinishedOf = (serviceId: string) => deps.jobs.unfinished(serviceQueueKey(serviceId));

  /** The latest unfinished job of the call's kind: what an earlier identical call queued and is still waiting for. */
  const underWay = async (serviceId: string, call: Exclude<ProvisioningCall, "info">): Promise<Job | undefined> =>
    lastOfCall(await unfinishedOf(serviceId), call);

  /**
   * The answer for the call's own job (`ownId`), or the licence when the call has no work of its
   * own. Other jobs of the service (a blocked renewal of the sweep's, say) are not the call's
   * outcome: they only explain why its own job waits.
   */
  const outcome = async (call: Exclude<ProvisioningCall, "info">, serviceId: string, ownId: number | undefined): Promise<Answer> => {
    const deadline = now() + deps.waitMs;
    if (ownId !== undefined) {
      // Called again after a refusal (the balance topped up, the token fixed): run the blocked job again.
      const head = (await unfinishedOf(serviceId))[0];
      if (head?.state === "blocked" && head.kind === KIND_OF[call] && head.id <= ownId) await deps.jobs.retry(head.id);
    }
    // What the wait last saw blocking the call's job from earlier in its queue (until() returns the job it last judged).
    let behind: Job | undefined;
    const own =
      ownId === undefined
        ? undefined
        : await deps.waiter.until(ownId, deadline, async (j) => {
            behind = isSettled(j) ? undefined : await blockedBehind(j);
            return isSettled(j) || behind !== undefined;
          });
    const svc = await deps.services.get(serviceId);
    if (!svc) return unknown();
    if (!own || own.state === "succeeded") return licence(svc);
    if (own.state === "blocked" || own.state === "failed") {
      return refusal(502, (own.errorCode as ErrorCode | null) ?? "job_failed", own.lastError ?? `job ${own.id} is ${own.state}`, {
        status: own.state,
        license_key: svc.license_key,
        job_id: own.id,
      });
    }
    // Not refused: accepted and queued. Behind a blocked job it runs, in order, once that job is
    // resolved (retried by the operator, healed, or re-run by the call that queued it).
    const message = behind
      ? `queued as job ${own.id} behind job ${behind.id} (${behind.kind}), which is blocked: ${behind.lastError ?? "see the job"}; ` +
        "it runs once that job is resolved, and the same call made again later answers with its outcome"
      : `still in progress (job ${own.id}${own.lastError ? `: ${own.lastError}` : ""}); ` +
        "the work goes on, and the same call made again later answers with its outcome";
    return { status: 202, body: { success: false, status: "pending", license_key: svc.license_key, message } };
  };

  /** The blocked job, earlier in the service's queue, that keeps `job` from running. */
  const blockedBehind = async (job: Job): Promise<Job | undefined> => {
    if (!job.queueKey || job.state !== "queued") return undefined;
    const first = (await deps.jobs.unfinished(job.queueKey))[0];
    return first && first.id < job.id && first.state === "blocked" ? first : undefined;
  };

  const keyParamOf = (t: TargetParams) => (t.license_key !== undefined ? "license_key" : "service_identifier") as "license_key" | "service_identifier";

  const calls: Record<ProvisioningCall, (params: Record<string, unknown>) => Promise<Answer>> = {
    async create(params) {
      const p = parse(createParams, params);
      if (!p.ok) return p.answer;
      const v = p.value;
      const event: BillingEvent = {
        type: "service.created",
        service: {
          id: v.service_identifier ?? derivedServiceIdentifier(v),
          product_id: v.package_identifier,
          billing_cycle: v.billing_cycle,
          ip: v.ip,
          ...(v.customer_email ? { customer: { email: v.customer_email, ...(v.customer_name ? { name: v.customer_name } : {}) } } : {}),
          ...(v.next_due_date ? { next_due_date: v.next_due_date } : {}),
        },
      };
      return submit("create", event, "service_identifier");
    },

    suspend: (params) => statusCall("suspend", "service.suspended", params),
    unsuspend: (params) => statusCall("unsuspend", "service.unsuspended", params),
    terminate: (params) => statusCall("terminate", "service.terminated", params),

    async renew(params) {
      const p = await located(renewParams, params);
      if (!p.ok) return p.answer;
      const { svc } = p;
      // A date makes the renewal idempotent by itself: the same date set twice is one payment. A
      // terminated service's renewal goes to the rules too, which refuse it, dated or not.
      if (p.value.next_due_date || project(svc, await unfinishedOf(svc.service_id)).terminated) {
        const service = { id: svc.service_id, ...(p.value.next_due_date ? { next_due_date: p.value.next_due_date } : {}) };
        return submit("renew", { type: "service.renewed", service }, keyParamOf(p.value));
      }
      // Without one, each renewal adds a cycle, so a retry must not be taken for a new payment.
      // The last renewal recorded, if dateless and still under way or ended within the window, is
      // this call's: answer for it. Otherwise this is a payment of its own, stored under an id
      // derived from the last renewal, so that concurrent retries (on any instance, the first
      // not yet committed) are one event to the intake's dedupe.
      const [last] = await deps.jobs.list({ serviceId: svc.service_id, kind: JOB_KINDS.recordPayment, limit: 1 });
      if (last && !hasDueDate(last) && (!isSettled(last) || now() - last.updatedAt < RENEW_REPEAT_WINDOW_MS)) {
        return outcome("renew", svc.service_id, last.id);
      }
      const after = last ? (last.eventId ?? `job-${last.id}`) : "none";
      return submit("renew", { type: "service.renewed", service: { id: svc.service_id } }, keyParamOf(p.value), `prov:renew:${svc.service_id}:after:${after}`);
    },

    async "change-ip"(params) {
      const p = await located(changeIpParams, params);
      if (!p.ok) return p.answer;
      const { svc } = p;
      // Already there (nothing to change), or on its way there (answer for the change under way);
      // a terminated service's change goes to the rules, which refuse it whatever the IP.
      const unfinished = await unfinishedOf(svc.service_id);
      const projection = project(svc, unfinished);
      if (!projection.terminated && p.value.new_ip === projection.ip) return outcome("change-ip", svc.service_id, lastOfCall(unfinished, "change-ip")?.id);
      const event: BillingEvent = { type: "service.ip_changed", service: { id: svc.service_id, ip: svc.ip }, changes: { ip: p.value.new_ip } };
      return submit("change-ip", event, keyParamOf(p.value));
    },

    async "change-package"(params) {
      const p = await located(changePackageParams, params);
      if (!p.ok) return p.answer;
      const { svc } = p;
      const unfinished = await unfinishedOf(svc.service_id);
      if (p.value.package_identifier === svc.product_id && !lastOfCall(unfinished, "change-package") && !project(svc, unfinished).terminated) {
        return outcome("change-package", svc.service_id, undefined);
      }
      const event: BillingEvent = {
        type: "service.product_changed",
        service: { id: svc.service_id, product_id: svc.product_id },
        changes: { product_id: p.value.package_identifier },
      };
      return submit("change-package", event, keyParamOf(p.value));
    },

    async info(params) {
      const p = await located(targetParams, params);
      return p.ok ? licence(p.svc) : p.answer;
    },
  };

  async function statusCall(call: "suspend" | "unsuspend" | "terminate", type: BillingEvent["type"], params: Record<string, unknown>): Promise<Answer> {
    const p = await located(targetParams, params);
    if (!p.ok) return p.answer;
    const { svc } = p;
    // Already so, or on its way there: queue nothing (a job queued behind a blocked one would
    // make a repeat wait for that), and answer for the same call's job if it is still under way.
    const unfinished = await unfinishedOf(svc.service_id);
    if (call !== "terminate" && statusAfter(svc, unfinished) === (call === "suspend" ? "suspended" : "active")) {
      return outcome(call, svc.service_id, lastOfCall(unfinished, call)?.id);
    }
    return submit(call, { type, service: { id: svc.service_id } }, keyParamOf(p.value));
  }

  return {
    async call(name: ProvisioningCall, params: Record<string, unknown>): Promise<Answer> {
      const how = parse(onPendingParam, params);
      if (!how.ok) return how.answer;
      const answer = await calls[name](params);
      if (answer.status !== 202 || how.value.on_pending !== "error") return answer;
      // Not a 2xx: a caller that reads any 2xx with a license_key as done records a failure and runs the call again.
      const { message, ...pending } = answer.body;
      const serviceId = (await deps.services.byLicenseKey(String(answer.body.license_key)))?.service_id;
      return {
        status: 503,
        retryAfterSeconds: PENDING_RETRY_AFTER_SECONDS,
        body: { ...pending, ...(serviceId ? { service_identifier: serviceId } : {}), code: "pending", error: message },
      };
    },
  };
}

export type Provisioning = ReturnType<typeof createProvisioning>;
