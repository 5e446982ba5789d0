import { z } from "zod";
import { JobFailedError } from "../jobs/errors.js";
import type { JobHandler } from "../jobs/runner.js";
import { ipSchema } from "../reseller/vocabulary.js";
import type { LifecycleDeps } from "./deps.js";
import { NOT_CHARGING, once } from "./once.js";
import { eventOutcome } from "./record.js";
import { mustGet } from "./targets.js";
import { licenceTypes } from "./targets.js";
import { sameIp } from "../reseller/ip-address.js";

const payloadSchema = z.object({ ip: ipSchema });

/** `service.ip_changed`: re-bind the licence (its cpanel companions follow upstream by themselves). */
export function changeIpHandler(deps: LifecycleDeps): JobHandler {
  const { services, upstream, clock, db } = deps;
  return async (job, ctx) => {
    const { ip: to } = payloadSchema.parse(job.payload);
    const svc = mustGet(deps, job);
    const from = svc.ip;
    if (svc.status === "terminated") throw new JobFailedError("the service is terminated; its IP is not changed");

    let detail: string;
    if (sameIp(from, to)) {
      detail = "already bound to this IP";
    } else if (svc.status === "pending" || svc.status === "failed") {
      // Nothing upstream yet: a later registration uses the new IP.
      detail = "no licence upstream yet; recorded locally";
    } else {
      for (const type of licenceTypes(svc)) {
        const r = await once(
          job,
          ctx,
          { op: `change_ip:${type}`, from, to },
          async () => (await upstream.licencesAt(to)).some((l) => l.type === type),
          () => upstream.changeIp(from, to, type),
          NOT_CHARGING,
        );
        ctx.logger.debug({ type, confirmedEarlier: r.confirmedEarlier }, "ip changed upstream");
      }
      detail = `${from} → ${to}`;
    }

    db.transaction(() => {
      services.update(svc.service_id, { ip: to, last_error: null }, clock.now());
      const companions = JSON.parse(svc.companions) as string[];
      services.addHistory({
        service_id: svc.service_id,
        at: clock.now(),
        event_id: job.eventId,
        job_id: job.id,
        action: "ip changed",
        detail: companions.length ? `${detail}; companions ${companions.join(", ")} follow` : detail,
      });
      eventOutcome(db, job, "applied", null);
    })();
  };
}
