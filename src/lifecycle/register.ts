import { defineJob, jobOf } from "../jobs/define.js";
import { JobSkippedError } from "../jobs/errors.js";
import type { Job } from "../vocabulary/jobs.js";
import type { ServiceChange, ServicePatch, ServiceRow } from "../store/store.js";
import type { LifecycleDeps } from "./deps.js";
import { changeCoreOnce } from "./change-core.js";
import { acquire, type Acquired } from "./acquire.js";
import { checkCharge } from "../intake/charge-rule.js";
import { addMonths } from "./record.js";
import { jobChange, mustGet } from "./service-changes.js";
import { INSTALL_MAIL, REGISTER } from "../intake/jobs.js";


/**
 * `service.created`: buy the licence (or bundle) exactly once, move it to its variant where the
 * provider sets variants after the purchase (a LiteSpeed licence's cores), mark the service
 * active and queue the install-command mail. Safe to run again at any point: each step looks at
 * what is already recorded.
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
      const acquired = await acquire(deps, job, ctx, svc, reactivate ? "reactivate" : "buy");
      activation = activate(deps, job, svc, acquired);
      if (reactivate || variantChange(deps, svc)) {
        await store.services.change(activation);
        activation = undefined;
        svc = await mustGet(deps, job);
        if (reactivate) await afterActivation?.(svc.service_id);
      }
    }

    const change = variantChange(deps, svc);
    if (change) {
      const detail = await changeCoreOnce(deps.providers.providerFor(svc), job, ctx, svc, change.from, change.to);
      await store.services.change(jobChange(job, svc.service_id, { patch: { upstream_variant: change.to }, history: [{ action: "variant set", detail }] }));
    }

    return mergeChanges(
      activation,
      jobChange(job, svc.service_id, {
        outcome: ["applied", null],
        ...(svc.customer_email && job.payload.mail !== false
          ? { enqueue: [jobOf(INSTALL_MAIL, {}, { serviceId: svc.service_id, eventId: job.eventId })] }
          : {
              history: [
                {
                  action: "install mail not sent",
                  detail:
                    job.payload.mail === false
                      ? "bought for a service taken over from the panel's export, whose operator asked for no mail (adopt without --mail); the install command is in the admin API and the panel module"
                      : "the order carried no customer e-mail (the panel's hook has none); the install command is in the admin API and the panel module",
                },
              ],
            }),
      }),
    );
  });
}

/**
 * A licence whose variant differs from the one its provider holds (a LiteSpeed licence: a new
 * registration is plain `litespeed` upstream, as the activation records): it needs a change of
 * variant. The same answer before and after the activation, so the activation is written first
 * only when it does.
 */
function variantChange(deps: LifecycleDeps, svc: ServiceRow): { from: string; to: string } | undefined {
  if (svc.kind !== "licence") return undefined;
  const registered = deps.providers.providerFor(svc).registeredVariant(svc);
  if (registered === undefined) return undefined;
  const from = svc.upstream_variant ?? registered;
  const to = svc.variant ?? registered;
  return from === to ? undefined : { from, to };
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

function activate(deps: LifecycleDeps, job: Pick<Job, "id" | "eventId">, svc: ServiceRow, acquired: Acquired): ServiceChange {
  const provider = deps.providers.providerFor(svc);
  const registered = provider.registeredVariant(svc);
  const now = deps.clock.now();
  const expiresAt = acquired.expiresAt ?? addMonths(now, svc.months);
  return jobChange(job, svc.service_id, {
    patch: {
      status: "active",
      expires_at: expiresAt,
      // The order itself paid one cycle unless the panel told us its due date. A licence adopted
      // (kept from before a termination, or bought outside the bridge) has a term of its own: the
      // paid cycle runs from now, and the sweep renews it when the gap is real.
      paid_until: svc.paid_until ?? (acquired.adopted ? Math.max(expiresAt, addMonths(now, svc.months)) : expiresAt),
      companions: JSON.stringify(provider.companionsOf(svc)),
      // As the provider holds it: a new registration as it registers one (LiteSpeed: plain litespeed), an adopted one what the list says.
      upstream_variant: registered === undefined ? null : (acquired.upstreamVariant ?? registered),
      bundle_key: acquired.bundleKey === undefined ? svc.bundle_key : acquired.bundleKey,
      // The provider's own id of what it sold (Manage2's licenseid): later calls address it by that.
      upstream_id: acquired.upstreamId ?? svc.upstream_id,
      last_error: null,
    },
    history: [{ action: "registered", detail: acquired.note }],
  });
}
