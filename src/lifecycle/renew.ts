import { z } from "zod";
import { JobBlockedError } from "../jobs/errors.js";
import type { JobHandler } from "../jobs/runner.js";
import type { BillingCycleMonths } from "../reseller/vocabulary.js";
import type { LifecycleDeps } from "./deps.js";
import { charging, once } from "./once.js";
import { addMonths, isoToMs } from "./record.js";
import { mustGet } from "./targets.js";
import { licenceTypes } from "./targets.js";

const payloadSchema = z.object({ term_end: z.number() });

/**
 * Renews one licence for one term, exactly once: the term it renews is in the payload, so a
 * job for a term already renewed does nothing; a lost answer is settled by the licence list's
 * expiry, and when the list cannot tell, the job waits for the operator instead of paying twice.
 */
export function renewHandler(deps: LifecycleDeps): JobHandler {
  const { services, upstream, clock, db } = deps;
  return async (job, ctx) => {
    const { term_end: term } = payloadSchema.parse(job.payload);
    const svc = mustGet(deps, job);
    const skip = (why: string) =>
      services.addHistory({ service_id: svc.service_id, at: clock.now(), job_id: job.id, action: "renewal skipped", detail: why });
    if (svc.status !== "active") return skip(`the service is ${svc.status}`);
    if (svc.expires_at !== term) return skip("this term was already renewed");
    if (!(svc.paid_until !== null && svc.paid_until > term)) return skip("not paid beyond the current term");

    const months = svc.months as BillingCycleMonths;
    let newEnd: number | undefined;
    let confirmedEarlier = false;
    for (const type of licenceTypes(svc)) {
      const r = await once(
        job,
        ctx,
        { op: `renew:${type}`, ip: svc.ip, term },
        async () => {
          const l = (await upstream.licencesAt(svc.ip)).find((x) => x.type === type && !x.free);
          const listed = isoToMs(l?.expires_at);
          if (listed === undefined) {
            throw new JobBlockedError(
              `cannot tell whether the renewal of ${type} for ${svc.ip} went through (the answer was lost and the ` +
                "licence list shows no expiry), so it stays blocked rather than risk paying twice; check the licence in " +
                "the reseller panel and renew it there if it was not renewed",
            );
          }
          if (listed > term) newEnd = listed;
          return listed > term;
        },
        () => upstream.renew(svc.ip, type, months),
        charging(deps),
      );
      if (r.confirmedEarlier) confirmedEarlier = true;
      else newEnd = isoToMs(r.value.expires_at) ?? newEnd;
    }
    const expiresAt = newEnd ?? addMonths(term, months);
    db.transaction(() => {
      services.update(svc.service_id, { expires_at: expiresAt, last_error: null }, clock.now());
      const companions = JSON.parse(svc.companions) as string[];
      services.addHistory({
        service_id: svc.service_id,
        at: clock.now(),
        job_id: job.id,
        action: "renewed",
        detail:
          `${months} month(s), term now ends ${new Date(expiresAt).toISOString()}` +
          (confirmedEarlier ? " (confirmed by the licence list after a lost answer)" : "") +
          (companions.length ? `; ${companions.join(", ")} renewed with it` : ""),
      });
    })();
  };
}
