import type { JobContext } from "../jobs/define.js";
import type { Job } from "../vocabulary/jobs.js";
import type { LitespeedVariant } from "../vocabulary/products.js";
import type { LifecycleDeps } from "./deps.js";
import { NOT_CHARGING, callOnce } from "./call-once.js";

/**
 * Moves a LiteSpeed licence from one core variant to another, once: after a lost answer the
 * licence list's variant tells whether it happened. Returns the history detail.
 */
export async function changeCoreOnce(
  deps: Pick<LifecycleDeps, "upstream">,
  job: Pick<Job, "intent" | "attempts" | "maxAttempts">,
  ctx: JobContext,
  ip: string,
  from: LitespeedVariant,
  to: LitespeedVariant,
): Promise<string> {
  const r = await callOnce(
    job,
    ctx,
    { op: "change_core", ip, from, to },
    async () => (await deps.upstream.licensesAt(ip)).some((l) => l.type === "litespeed" && l.variant === to),
    () => deps.upstream.changeCore(ip, from, to),
    NOT_CHARGING,
  );
  return `change-core ${from} → ${to}${r.confirmedEarlier ? " (confirmed by the licence list)" : ""}`;
}
