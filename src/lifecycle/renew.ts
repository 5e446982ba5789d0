import { defineJob } from "../jobs/define.js";
import { JobBlockedError, JobSkippedError } from "../jobs/errors.js";
import type { BillingCycleMonths } from "../vocabulary/products.js";
import type { LifecycleDeps } from "./deps.js";
import { charging, callOnce, type OnceOptions } from "./call-once.js";
import { addMonths } from "./record.js";
import { jobChange, mustGet } from "./service-changes.js";
import { RENEW } from "../intake/jobs.js";
import { renewalDue } from "../intake/renewal-due.js";


/**
 * Renews one licence for one term, exactly once: the term it renews is in the payload, so a
 * job for a term already renewed does nothing; a lost answer is settled by the licence list's
 * expiry, and when the list cannot tell, the job waits for the operator instead of paying twice.
 */
export function renewJob(deps: LifecycleDeps) {
  return defineJob(RENEW, async (job, ctx) => {
    const { term_end: term } = job.payload;
    const svc = await mustGet(deps, job);
    if (svc.expires_at !== term) throw new JobSkippedError("this term was already renewed");

    // Right before a charge (not before an earlier attempt's lost answer is looked up: what it
    // may have bought is recorded whatever the service is now), the charging rule (terminated,
    // suspended, or on its way there), then the sweep's own rule: is the term still due? The
    // sweep queued it under its lead; the job asks without one.
    const charge = charging(deps, job, "renewal");
    const renewing: OnceOptions = {
      ...charge,
      mayCharge: async () => {
        await charge.mayCharge?.();
        const due = renewalDue(await mustGet(deps, job));
        if (!due.due) throw new JobSkippedError(`${due.why}; nothing bought`);
      },
    };
    const months = svc.months as BillingCycleMonths;
    const provider = deps.providers.providerFor(svc);
    // Billed each month the licence is active (Manage2, CLN): nothing to buy, the term is recorded.
    if (provider.capabilities.renewal === "billed-while-active") {
      await renewing.mayCharge?.();
      const expiresAt = addMonths(term, months);
      await deps.store.services.change(
        jobChange(job, svc.service_id, {
          patch: { expires_at: expiresAt, last_error: null },
          history: [
            {
              action: "renewed",
              detail: `${months} month(s), term now ends ${new Date(expiresAt).toISOString()}; nothing bought: ${provider.label} bills the licence each month it is active`,
            },
          ],
        }),
      );
      return;
    }
    let newEnd: number | undefined;
    let confirmedEarlier = false;
    for (const { sku, type } of provider.partsOf(svc)) {
      const r = await callOnce(
        job,
        ctx,
        { op: `renew:${sku}`, ip: svc.ip, term },
        async () => {
          const listed = (await provider.holdingsAt(svc.ip, { skus: [sku] })).find((h) => h.sku === sku && !h.free)?.expiresAt;
          if (listed === undefined) {
            throw new JobBlockedError(
              `cannot tell whether the renewal of ${type} for ${svc.ip} went through (the answer was lost and the ` +
                "licence list shows no expiry), so it stays blocked rather than risk paying twice; check the licence in " +
                `${provider.label} panel and renew it there if it was not renewed`,
            );
          }
          if (listed > term) newEnd = listed;
          return listed > term;
        },
        (beforeSend) => provider.renew({ ip: svc.ip, sku }, months, { beforeSend }),
        renewing,
      );
      if (r.confirmedEarlier) confirmedEarlier = true;
      else newEnd = r.value.expiresAt ?? newEnd;
    }
    const expiresAt = newEnd ?? addMonths(term, months);
    const companions = JSON.parse(svc.companions) as string[];
    await deps.store.services.change(
      jobChange(job, svc.service_id, {
        patch: { expires_at: expiresAt, last_error: null },
        history: [
          {
            action: "renewed",
            detail:
              `${months} month(s), term now ends ${new Date(expiresAt).toISOString()}` +
              (confirmedEarlier ? " (confirmed by the licence list after a lost answer)" : "") +
              (companions.length ? `; ${companions.join(", ")} renewed with it` : ""),
          },
        ],
      }),
    );
  });
}
