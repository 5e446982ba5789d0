import { defineJob } from "../jobs/define.js";
import { JobFailedError } from "../jobs/errors.js";
import { sameIp } from "../vocabulary/ip-address.js";
import type { LifecycleDeps } from "./deps.js";
import { NOT_CHARGING, callOnce } from "./call-once.js";
import { buyForChange, finishReplacement, heldPartOf, isMovedLicence, recordReplacement, replacedLeft } from "./provider-steps.js";
import { jobChange, mustGet } from "./service-changes.js";
import { CHANGE_IP } from "../intake/jobs.js";


/** `service.ip_changed`: re-bind the licence (its cpanel companions follow upstream by themselves). */
export function changeIpJob(deps: LifecycleDeps) {
  return defineJob(CHANGE_IP, async (job, ctx) => {
    const { ip: to } = job.payload;
    const svc = await mustGet(deps, job);
    const from = svc.ip;
    const left = replacedLeft(job);
    if (left) {
      // An earlier attempt bought the new IP's licence and recorded the move (the patch again, in
      // case it stopped in between); the old licence is left to remove.
      const removed = await finishReplacement(deps, deps.providers.providerFor(svc), job, ctx, left);
      await deps.store.services.change(jobChange(job, svc.service_id, { patch: { ip: to, last_error: null }, history: [{ action: "ip changed", detail: `the licence it replaced: ${removed}` }], outcome: ["applied", null] }));
      return;
    }
    if (svc.status === "terminated") throw new JobFailedError("the service is terminated; its IP is not changed", "service_terminated");

    let detail: string;
    if (sameIp(from, to)) {
      detail = "already bound to this IP";
    } else if (svc.status === "pending" || svc.status === "failed") {
      // Nothing upstream yet: a later registration uses the new IP.
      detail = "no licence upstream yet; recorded locally";
    } else {
      const provider = deps.providers.providerFor(svc);
      const parts = provider.partsOf(svc);
      if (svc.status === "suspended" && provider.capabilities.suspension !== "native") {
        // Expired or removed upstream: nothing there to move (Manage2 transfers only an active
        // licence). The unsuspension brings it back at the new IP.
        detail = `${from} → ${to}; the licence is out of use at ${provider.label} while the service is suspended, so it is brought back at ${to} when the service is unsuspended`;
      } else if (provider.capabilities.changeIp === "register-then-remove") {
        // The new IP's licence first: the customer is never without one, and a register refused
        // leaves the old one as it was.
        for (const part of parts) await buyForChange(deps, provider, job, ctx, svc, to, part, `service ${svc.service_id}'s change of IP from ${from}`);
        await recordReplacement(
          deps,
          provider,
          job,
          ctx,
          parts.map((p) => ({ ip: from, sku: p.sku })),
          { patch: { ip: to }, history: { action: "ip changed", detail: `${from} → ${to}: registered at ${to}; the licence at ${from} is still to be removed` } },
        );
        detail = `${from} → ${to}: registered at ${to}, then removed at ${from}`;
      } else {
        for (const { sku, type } of parts) {
          const held = parts.length === 1 ? heldPartOf(svc, sku) : { ip: from, sku };
          const r = await callOnce(
            job,
            ctx,
            { op: `change_ip:${sku}`, from, to },
            // For Manage2 this finds the service's licence by its id at the new IP, which rests on
            // XMLtransfer keeping the licence id: inferred from its reason text, not documented,
            // and no licenseid is answered (docs/providers-research.md, open question 20). Were
            // it to change, the move would look undone and the job stop at XMLtransfer's refusal.
            async () => (await provider.holdingsAt(to, { skus: [sku] })).some((h) => isMovedLicence(h, held)),
            () => provider.changeIp(held, to),
            NOT_CHARGING,
          );
          ctx.logger.debug({ type, confirmedEarlier: r.confirmedEarlier }, "ip changed upstream");
        }
        detail = `${from} → ${to}`;
      }
    }
    const companions = JSON.parse(svc.companions) as string[];
    // After a replacement the row has the new IP already: this adds the outcome and the last word.
    await deps.store.services.change(
      jobChange(job, svc.service_id, {
        patch: { ip: to, last_error: null },
        history: [{ action: "ip changed", detail: companions.length ? `${detail}; companions ${companions.join(", ")} follow` : detail }],
        outcome: ["applied", null],
      }),
    );
  });
}
