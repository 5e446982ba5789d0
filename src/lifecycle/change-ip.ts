import { defineJob } from "../jobs/define.js";
import { JobFailedError } from "../jobs/errors.js";
import { sameIp } from "../vocabulary/ip-address.js";
import type { LifecycleDeps } from "./deps.js";
import { NOT_CHARGING, callOnce } from "./call-once.js";
import { jobChange, mustGet } from "./service-changes.js";
import { CHANGE_IP } from "../intake/jobs.js";


/** `service.ip_changed`: re-bind the licence (its cpanel companions follow upstream by themselves). */
export function changeIpJob(deps: LifecycleDeps) {
  return defineJob(CHANGE_IP, async (job, ctx) => {
    const { ip: to } = job.payload;
    const svc = await mustGet(deps, job);
    const from = svc.ip;
    if (svc.status === "terminated") throw new JobFailedError("the service is terminated; its IP is not changed", "service_terminated");

    let detail: string;
    if (sameIp(from, to)) {
      detail = "already bound to this IP";
    } else if (svc.status === "pending" || svc.status === "failed") {
      // Nothing upstream yet: a later registration uses the new IP.
      detail = "no licence upstream yet; recorded locally";
    } else {
      const provider = deps.providers.providerFor(svc);
      for (const { sku, type } of provider.partsOf(svc)) {
        const r = await callOnce(
          job,
          ctx,
          { op: `change_ip:${sku}`, from, to },
          async () => (await provider.holdingsAt(to)).some((h) => h.sku === sku),
          () => provider.changeIp({ ip: from, sku }, to),
          NOT_CHARGING,
        );
        ctx.logger.debug({ type, confirmedEarlier: r.confirmedEarlier }, "ip changed upstream");
      }
      detail = `${from} → ${to}`;
    }
    const companions = JSON.parse(svc.companions) as string[];
    await deps.store.services.change(
      jobChange(job, svc.service_id, {
        patch: { ip: to, last_error: null },
        history: [{ action: "ip changed", detail: companions.length ? `${detail}; companions ${companions.join(", ")} follow` : detail }],
        outcome: ["applied", null],
      }),
    );
  });
}
