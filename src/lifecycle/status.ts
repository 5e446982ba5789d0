import { defineJob, type JobDefinition } from "../jobs/define.js";
import { JobFailedError } from "../jobs/errors.js";
import type { ServiceStatus } from "../vocabulary/service-statuses.js";
import type { LifecycleDeps } from "./deps.js";
import type { ProviderCapabilities } from "../providers/port.js";
import { endLostOrder } from "./lost-order.js";
import { heldPartOf, unsuspendOnce } from "./provider-steps.js";
import { jobChange, jobSkipped, mustGet } from "./service-changes.js";
import { SUSPEND, TERMINATE, UNSUSPEND } from "../intake/jobs.js";

type Change = "suspend" | "unsuspend" | "terminate";

/**
 * What a status event does, by the service's current status and how its provider suspends: whether
 * the provider is asked (and to do what) and the status it leaves. Suspend and unsuspend are
 * idempotent upstream, so a retry after a lost answer simply calls again.
 *
 * A suspended service's licence is out of use upstream, as far as the row knows. With the
 * reseller's native suspension nothing brings it back behind the row, so suspending or
 * terminating it again asks nothing. Where suspending ends the licence (by expiry, by removal),
 * an unsuspension can bring it back (billed) and then fail with the row still suspended (its
 * move after the reactivation refused): so a suspension or termination of a suspended service
 * makes the provider's end call all the same, which is idempotent (Manage2's expire reads the
 * licence first; CLN's remove of a licence already gone answers that nothing was there).
 */
function transition(change: Change, from: ServiceStatus, suspension: ProviderCapabilities["suspension"]): { call: Change | null; to: ServiceStatus } | { skip: string } {
  const endsAgain = from === "suspended" && suspension !== "native";
  switch (change) {
    case "suspend":
      if (from === "active") return { call: "suspend", to: "suspended" };
      if (from === "suspended") return { call: endsAgain ? "suspend" : null, to: "suspended" };
      return { skip: `nothing to suspend: the service is ${from}` };
    case "unsuspend":
      if (from === "suspended") return { call: "unsuspend", to: "active" };
      if (from === "active") return { call: null, to: "active" };
      return { skip: `nothing to unsuspend: the service is ${from}` };
    case "terminate":
      if (from === "active" || endsAgain) return { call: "terminate", to: "terminated" };
      if (from === "terminated") return { skip: "already terminated" };
      return { call: null, to: "terminated" };
  }
}

/** The provider's own call for each change, as the history names it: a native suspension ends a licence by suspending it for good. */
const UPSTREAM_CALL: Readonly<Record<ProviderCapabilities["suspension"], Readonly<Record<Change, string>>>> = {
  native: { suspend: "suspend", unsuspend: "unsuspend", terminate: "suspend" },
  "by-expiry": { suspend: "expire", unsuspend: "reactivate", terminate: "expire" },
  "by-removal": { suspend: "remove", unsuspend: "register", terminate: "remove" },
};


/** `service.suspended`, `service.unsuspended`, `service.terminated`. */
export function statusJob(deps: LifecycleDeps, change: Change): JobDefinition<Record<string, unknown>> {
  const kind = change === "suspend" ? SUSPEND : change === "unsuspend" ? UNSUSPEND : TERMINATE;
  return defineJob(kind, async (job, ctx) => {
    const svc = await mustGet(deps, job);
    const provider = deps.providers.providerFor(svc);
    const step = transition(change, svc.status, provider.capabilities.suspension);
    if ("skip" in step) {
      await deps.store.services.change(jobSkipped(job, svc.service_id, `${change} skipped`, step.skip));
      return;
    }
    const call = step.call && UPSTREAM_CALL[provider.capabilities.suspension][step.call];
    const gone: string[] = [];
    // An order that never learnt whether it bought: what it left, billed each month it is active, is ended with the service.
    const unordered = change === "terminate" && (svc.status === "failed" || svc.status === "pending") && provider.capabilities.renewal === "billed-while-active";
    const lostOrder = unordered ? await endLostOrder(deps, provider, svc) : undefined;
    if (step.call) {
      const parts = provider.partsOf(svc);
      for (const { sku, type } of parts) {
        // The provider's own id names the licence of a one-licence product (Manage2's licenseid).
        const held = parts.length === 1 ? heldPartOf(svc, sku) : { ip: svc.ip, sku };
        if (step.call === "unsuspend" && provider.capabilities.unsuspendBills) {
          // A reactivation fee, a register again: a charge, once per unsuspension.
          await unsuspendOnce(deps, provider, job, ctx, held, "reactivation");
          continue;
        }
        const outcome = await provider[step.call](held);
        if (!outcome.done) {
          // Terminating a licence the provider no longer has leaves nothing to end: the
          // service ends terminated all the same (never renewed, its address free again); nor
          // does suspending again a suspended service's licence that is gone.
          if (change === "terminate" || svc.status === "suspended") {
            gone.push(type);
            continue;
          }
          throw new JobFailedError(`${provider.label} has no ${type} licence for ${svc.ip}, so it cannot be ${change}ed; run reconcile to see the drift`, "upstream_not_found");
        }
        ctx.logger.debug({ type, call }, "upstream status changed");
      }
    }
    await deps.store.services.change(
      jobChange(job, svc.service_id, {
        patch: { status: step.to, last_error: null },
        history: [
          {
            action: change === "terminate" ? "terminated" : `${change}ed`,
            detail:
              lostOrder ??
              (!call
                ? "no upstream call needed"
                : gone.length
                  ? `upstream ${call}; ${provider.label} has no ${gone.join(", ")} licence for ${svc.ip}, so there was nothing to ${call}`
                  : `upstream ${call}`),
          },
        ],
        outcome: ["applied", null],
      }),
    );
  });
}
