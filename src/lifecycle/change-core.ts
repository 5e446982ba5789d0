import type { JobContext } from "../jobs/define.js";
import type { Job } from "../vocabulary/jobs.js";
import type { LicenceProvider } from "../providers/port.js";
import type { ServiceRow } from "../store/store.js";
import { NOT_CHARGING, callOnce } from "./call-once.js";

/**
 * Moves the service's licence at its IP from one variant to another in place (a LiteSpeed
 * licence's cores: the reseller's change-core), once: after a lost answer the variant the
 * provider holds tells whether it happened. Returns the history detail.
 */
export async function changeCoreOnce(
  provider: LicenceProvider,
  job: Pick<Job, "intent" | "attempts" | "maxAttempts">,
  ctx: JobContext,
  svc: ServiceRow,
  from: string,
  to: string,
): Promise<string> {
  const ip = svc.ip;
  const skus = provider.partsOf(svc).map((p) => p.sku);
  const r = await callOnce(
    job,
    ctx,
    { op: "change_core", ip, from, to },
    async () => (await provider.holdingsAt(ip, { skus })).some((h) => h.variant === to),
    () => provider.changeVariant(ip, from, to),
    NOT_CHARGING,
  );
  return `change-core ${from} → ${to}${r.confirmedEarlier ? " (confirmed by the licence list)" : ""}`;
}
