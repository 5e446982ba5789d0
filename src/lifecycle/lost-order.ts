import type { LicenceProvider } from "../providers/port.js";
import type { ServiceRow } from "../store/store.js";
import { JOB_KINDS } from "../vocabulary/job-kinds.js";
import type { LifecycleDeps } from "./deps.js";
import { purchaseIntent } from "./acquire.js";

/**
 * A service that ends before its order learnt whether its purchase happened: the register job
 * stopped (failed, or waiting for the operator) with its charge intent still recorded, the
 * answer lost and the look after it never made. With a provider that bills while a licence is
 * active (Manage2, CLN), what that purchase left would be billed each month for a service that is
 * gone, and the job's own retry skips a terminated service. So the termination looks for it, as
 * the order's retry would (by the intent the purchase carried, Manage2's `external_notes`; else
 * at the IP, which no other live service can hold the same licence at) and ends what it finds.
 * What was ended, in words; undefined when there was no such order or nothing of it upstream.
 */
export async function endLostOrder(deps: LifecycleDeps, provider: LicenceProvider, svc: ServiceRow): Promise<string | undefined> {
  const orders = (await deps.store.jobs.list({ serviceId: svc.service_id, kind: JOB_KINDS.register })).filter(
    (j) => j.intent !== null && (j.state === "failed" || j.state === "blocked"),
  );
  const ended: string[] = [];
  for (const order of orders) {
    const left = await provider.findPurchase(svc.ip, svc, { intent: purchaseIntent(svc, order) });
    for (const h of left ?? []) {
      const outcome = await provider.terminate({ ip: h.ip, sku: h.sku, ...(h.upstreamId ? { upstreamId: h.upstreamId } : {}) });
      if (outcome.done) ended.push(`${h.type}${h.detail ? ` (${h.detail})` : ""} at ${h.ip}, left by job ${order.id}`);
    }
  }
  return ended.length ? `${provider.label} held what the order whose answer was lost bought: ${ended.join("; ")}; ended it` : undefined;
}
