import { z } from "zod";
import { defineJob, jobKind, jobOf } from "../jobs/define.js";
import { JobSkippedError } from "../jobs/errors.js";
import type { JobContext } from "../jobs/runner.js";
import type { Job } from "../jobs/types.js";
import { AlreadyExistsError } from "../reseller/errors.js";
import type { UpstreamLicense } from "../reseller/answers.js";
import type { BillingCycleMonths, LitespeedVariant, ProductType } from "../reseller/vocabulary.js";
import type { ServiceChange, ServicePatch, ServiceRow } from "../store/store.js";
import type { LifecycleDeps } from "./deps.js";
import { JOB_KINDS } from "./job-kinds.js";
import { changeCoreOnce } from "./change-core.js";
import { charging, once } from "./once.js";
import { checkCharge } from "./charge-rule.js";
import { INSTALL_MAIL } from "../mail/install-mail.js";
import { addMonths, isoToMs } from "./record.js";
import { jobChange, licenceTypes, mustGet } from "./targets.js";
import { bundleComponents, companionsOf } from "../reseller/upstream.js";

export const REGISTER = jobKind({
  kind: JOB_KINDS.register,
  payload: z
    .object({
      reactivate: z.boolean().optional(),
      /** An order that came while the service's termination was queued: its row, written once that is done. */
      order: z.record(z.string(), z.unknown()).optional(),
    })
    .loose(),
});

/**
 * `service.created`: buy the licence (or bundle) exactly once, move a LiteSpeed licence to its
 * variant, mark the service active and queue the install-command mail. Safe to run again at any
 * point: each step looks at what is already recorded.
 */
export function registerJob(deps: LifecycleDeps, afterActivation?: (serviceId: string) => Promise<unknown>) {
  const { store } = deps;
  return defineJob(REGISTER, async (job, ctx) => {
    let svc = await mustGet(deps, job);
    if (job.payload.order && svc.order_event_id !== job.eventId) {
      if (svc.status !== "terminated") {
        throw new JobSkippedError(`ordered again while its termination was queued, but the service is ${svc.status} (the termination was not applied): nothing to start again`);
      }
      const order = { ...(job.payload.order as ServicePatch), order_event_id: job.eventId };
      await store.services.change(jobChange(job, svc.service_id, { patch: order, history: [{ action: "ordered again", detail: "the order that came while the termination was applied" }] }));
      svc = await mustGet(deps, job);
    }
    // An older order's job (an operator's retry after the service was ordered again) buys and mails nothing.
    if (job.eventId && svc.order_event_id && svc.order_event_id !== job.eventId) {
      throw new JobSkippedError(`superseded: the service was ordered again (event ${svc.order_event_id}); this older order buys and mails nothing`);
    }
    if (svc.status === "terminated") throw new JobSkippedError("the service was terminated before its licence was registered; nothing bought, no mail sent");

    const toBuy = svc.status === "pending" || svc.status === "failed";
    // The panel terminated the service while this order waited (blocked on the balance, say): a
    // licence bought (or unsuspended) now would be suspended at once and never used. The charging
    // rule says so here, before anything is done, and again right before the purchase. Unless an
    // earlier attempt may have bought it already (its intent is recorded): the licence list decides.
    if (toBuy && !job.intent) await checkCharge(deps, job, "order");

    // The activation is written with the job's ending (one commit), unless a later step needs it first.
    let activation: ServiceChange | undefined;
    if (toBuy) {
      const reactivate = job.payload.reactivate === true;
      const bought = (reactivate ? await reactivateIfPresent(deps, svc) : undefined) ?? (await buy(deps, job, ctx, svc));
      activation = activate(deps, job, svc, bought);
      if (reactivate || variantPending(svc)) {
        await store.services.change(activation);
        activation = undefined;
        svc = await mustGet(deps, job);
        if (reactivate) await afterActivation?.(svc.service_id);
      }
    }

    if (variantPending(svc)) {
      const from = (svc.upstream_variant ?? "litespeed") as LitespeedVariant;
      const to = svc.variant as LitespeedVariant;
      const detail = await changeCoreOnce(deps, job, ctx, svc.ip, from, to);
      await store.services.change(jobChange(job, svc.service_id, { patch: { upstream_variant: to }, history: [{ action: "variant set", detail }] }));
    }

    return mergeChanges(
      activation,
      jobChange(job, svc.service_id, {
        outcome: ["applied", null],
        ...(svc.customer_email
          ? { enqueue: [jobOf(INSTALL_MAIL, {}, { serviceId: svc.service_id, eventId: job.eventId })] }
          : {
              history: [
                {
                  action: "install mail not sent",
                  detail: "the order carried no customer e-mail (the panel's hook has none); the install command is in the admin API and the panel module",
                },
              ],
            }),
      }),
    );
  });
}

/**
 * A LiteSpeed licence whose variant differs from the one upstream (a new registration is plain
 * `litespeed` upstream, as the activation records): it needs a change-core. The same answer
 * before and after the activation, so the activation is written first only when it does.
 */
function variantPending(svc: ServiceRow): boolean {
  return svc.kind === "licence" && svc.type === "litespeed" && !!svc.variant && (svc.upstream_variant ?? "litespeed") !== svc.variant;
}

/** Two changes of one service as one: patches merged (the later wins), histories and jobs in order. */
function mergeChanges(first: ServiceChange | undefined, then: ServiceChange): ServiceChange {
  if (!first) return then;
  return {
    serviceId: then.serviceId,
    patch: { ...first.patch, ...then.patch },
    history: [...(first.history ?? []), ...(then.history ?? [])],
    ...((then.event ?? first.event) ? { event: then.event ?? first.event } : {}),
    enqueue: [...(first.enqueue ?? []), ...(then.enqueue ?? [])],
  };
}

interface Bought {
  expiresAt?: number;
  /** The licence was kept from before the service was terminated: its expiry is of an old term. */
  earlierTerm?: boolean;
  bundleKey?: string;
  note: string;
}

const isSuspended = (l: UpstreamLicense) => l.status !== undefined && /suspend/i.test(l.status);

/**
 * A terminated service ordered again: its licence is normally still at the reseller, suspended.
 * Unsuspend it instead of registering (which the reseller would refuse, or charge for).
 * Undefined when the reseller no longer has it: then it is bought as for a new order.
 */
async function reactivateIfPresent(deps: LifecycleDeps, svc: ServiceRow): Promise<Bought | undefined> {
  const types = licenceTypes(svc);
  const at = (await deps.upstream.licencesAt(svc.ip)).filter((l) => !l.free && types.includes(l.type as ProductType));
  if (types.length === 0 || !types.every((t) => at.some((l) => l.type === t))) return undefined;
  for (const l of at) if (isSuspended(l)) await deps.upstream.unsuspend(svc.ip, l.type as ProductType);
  const expiries = at.map((l) => isoToMs(l.expires_at)).filter((t): t is number => t !== undefined);
  return {
    expiresAt: expiries.length ? Math.min(...expiries) : undefined,
    bundleKey: at.find((l) => l.bundle_key)?.bundle_key,
    earlierTerm: true,
    note: `ordered again: the reseller still had ${types.join(" and ")} for ${svc.ip}; unsuspended, nothing bought`,
  };
}

async function buy(deps: LifecycleDeps, job: Pick<Job, "id" | "eventId" | "serviceId" | "intent" | "attempts" | "maxAttempts">, ctx: JobContext, svc: ServiceRow): Promise<Bought> {
  const { upstream } = deps;
  const months = svc.months as BillingCycleMonths;

  if (svc.kind === "bundle") {
    const bundle = svc.bundle!;
    const components = bundleComponents(bundle);
    const found = async (): Promise<UpstreamLicense[] | null> => {
      const at = await upstream.licencesAt(svc.ip);
      const withKey = at.filter((l) => l.bundle_key);
      if (withKey.length > 0) return withKey;
      const present = components.length > 0 && components.every((t) => at.some((l) => l.type === t));
      return present ? at.filter((l) => components.includes(l.type as ProductType)) : null;
    };
    let earlier: UpstreamLicense[] | null = null;
    const adopted = (note: string): Bought => {
      const l = (earlier as UpstreamLicense[] | null)?.[0];
      return { expiresAt: isoToMs(l?.expires_at), bundleKey: l?.bundle_key, note };
    };
    try {
      const result = await once(
        job,
        ctx,
        { op: "register_bundle", ip: svc.ip, bundle, months },
        async () => (earlier = await found()) !== null,
        (beforeSend) => upstream.registerBundle(svc.ip, bundle, months, { beforeSend }),
        charging(deps, job, "order"),
      );
      if (result.confirmedEarlier) return adopted("bundle found upstream after a lost answer; not bought again");
      return { expiresAt: isoToMs(result.value.expires_at), bundleKey: result.value.bundle_key, note: `bundle ${bundle} registered` };
    } catch (err) {
      if (!(err instanceof AlreadyExistsError)) throw err;
      // As for a single licence: ours from an earlier attempt, or bought outside the bridge.
      earlier = await found();
      return adopted(`upstream already had the ${bundle} bundle for ${svc.ip}; adopted it, nothing bought`);
    }
  }

  const type = svc.type as ProductType;
  let earlier: UpstreamLicense | undefined;
  const lookup = async () => (earlier = (await upstream.licencesAt(svc.ip)).find((l) => l.type === type && !l.free));
  try {
    const result = await once(
      job,
      ctx,
      { op: "register", ip: svc.ip, type, months },
      async () => (await lookup()) !== undefined,
      (beforeSend) => upstream.register(svc.ip, type, months, { beforeSend }),
      // The upstream refuses a second register of the same ip and type ("already exists"), but
      // not while the first is still being carried out: the settle window guards that race.
      charging(deps, job, "order"),
    );
    if (result.confirmedEarlier) {
      return { expiresAt: isoToMs(earlier?.expires_at), note: "licence found upstream after a lost answer; not bought again" };
    }
    return { expiresAt: isoToMs(result.value.expires_at), note: `${type} registered for ${months} month(s)` };
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
    // Ours from an earlier attempt, or bought outside the bridge: either way it is not bought twice.
    const existing = await lookup();
    if (existing && isSuspended(existing)) await upstream.unsuspend(svc.ip, type);
    return {
      expiresAt: isoToMs(existing?.expires_at),
      note: `upstream already had a ${type} licence for ${svc.ip}; adopted it, nothing bought`,
    };
  }
}

function activate(deps: LifecycleDeps, job: Pick<Job, "id" | "eventId">, svc: ServiceRow, bought: Bought): ServiceChange {
  const now = deps.clock.now();
  const expiresAt = bought.expiresAt ?? addMonths(now, svc.months);
  return jobChange(job, svc.service_id, {
      patch: {
        status: "active",
        expires_at: expiresAt,
        // The order itself paid one cycle unless the panel told us its due date. A licence kept from
        // before a termination has its old term: the new cycle runs from now, and the sweep renews it.
        paid_until: svc.paid_until ?? (bought.earlierTerm ? Math.max(expiresAt, addMonths(now, svc.months)) : expiresAt),
        companions: JSON.stringify(companionsOf(svc.type, svc.bundle)),
        upstream_variant: svc.type === "litespeed" ? (svc.upstream_variant ?? "litespeed") : null,
        bundle_key: bought.bundleKey ?? svc.bundle_key,
        last_error: null,
      },
      history: [{ action: "registered", detail: bought.note }],
  });
}

