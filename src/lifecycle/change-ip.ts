import { defineJob } from "../jobs/define.js";
import { JobFailedError } from "../jobs/errors.js";
import { sameIp } from "../vocabulary/ip-address.js";
import type { LifecycleDeps } from "./deps.js";
import { NOT_CHARGING, callOnce } from "./call-once.js";
import { jobChange, licenseTypes, mustGet } from "./service-changes.js";
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
      for (const type of licenseTypes(svc)) {
        const r = await callOnce(
          job,
          ctx,
          { op: `change_ip:${type}`, from, to },
          async () => (await deps.upstream.licensesAt(to)).some((l) => l.type === type),
          () => deps.upstream.changeIp(from, to, type),
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
