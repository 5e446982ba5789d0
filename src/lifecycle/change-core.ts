import type { JobContext } from "../jobs/define.js";
import type { Job } from "../vocabulary/jobs.js";
import type { LicenceProvider } from "../providers/port.js";
import { NOT_CHARGING, callOnce } from "./call-once.js";

/**
 * Moves a licence from one variant to another in place (a LiteSpeed licence's cores: the
 * reseller's change-core), once: after a lost answer the variant the provider holds tells
 * whether it happened. Returns the history detail.
 */
export async function changeCoreOnce(
  provider: LicenceProvider,
  job: Pick<Job, "intent" | "attempts" | "maxAttempts">,
  ctx: JobContext,
  ip: string,
  from: string,
  to: string,
): Promise<string> {
  const r = await callOnce(
    job,
    ctx,
    { op: "change_core", ip, from, to },
    async () => (await provider.holdingsAt(ip)).some((h) => h.variant === to),
    () => provider.changeVariant(ip, from, to),
    NOT_CHARGING,
  );
  return `change-core ${from} → ${to}${r.confirmedEarlier ? " (confirmed by the licence list)" : ""}`;
}
