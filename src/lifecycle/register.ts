import { defineJob, jobOf } from "../jobs/define.js";
import { JobSkippedError } from "../jobs/errors.js";
import type { Job } from "../vocabulary/jobs.js";
import type { LitespeedVariant } from "../vocabulary/products.js";
import type { ServiceChange, ServicePatch, ServiceRow } from "../store/store.js";
import type { LifecycleDeps } from "./deps.js";
import { changeCoreOnce } from "./change-core.js";
import { acquire, type Acquired } from "./acquire.js";
import { checkCharge } from "../intake/charge-rule.js";
import { addMonths } from "./record.js";
import { jobChange, mustGet } from "./service-changes.js";
import { companionsOf } from "../reseller/upstream.js";
import { INSTALL_MAIL, REGISTER } from "../intake/jobs.js";


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
      const acquired = await acquire(deps, job, ctx, svc, reactivate ? "reactivate" : "buy");
      activation = activate(deps, job, svc, acquired);
      if (reactivate || variantPending(svc)) {
        await store.services.change(activation);
        activation = undefined;
        svc = await mustGet(deps, job);
        if (reactivate) await afterActivation?.(svc.service_id);
      }
    }

    if (variantPending(svc)) {
      const from = (svc.upstream_variant ?? "litespeed") as LitespeedVariant;
      const to = (svc.variant ?? "litespeed") as LitespeedVariant;
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
  return svc.kind === "licence" && svc.type === "litespeed" && (svc.upstream_variant ?? "litespeed") !== (svc.variant ?? "litespeed");
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
      companions: JSON.stringify(companionsOf(svc.type, svc.bundle)),
      // As the reseller holds it: a new registration is plain litespeed, an adopted one what the list says.
      upstream_variant: svc.type === "litespeed" ? (acquired.upstreamVariant ?? "litespeed") : null,
      bundle_key: acquired.bundleKey === undefined ? svc.bundle_key : acquired.bundleKey,
      last_error: null,
    },
    history: [{ action: "registered", detail: acquired.note }],
  });
}
