import type { JobContext } from "../jobs/define.js";
import { JobBlockedError } from "../jobs/errors.js";
import { isAlreadyHeld, type HeldPart, type Holding, type HoldingState, type LicenceProvider, type Part } from "../providers/port.js";
import type { ServicePatch, ServiceRow } from "../store/store.js";
import type { BillingCycleMonths } from "../vocabulary/products.js";
import type { Job } from "../vocabulary/jobs.js";
import { checkCharge, type ChargePurpose } from "../intake/charge-rule.js";
import { callOnce, charging, type Intent } from "./call-once.js";
import type { LifecycleDeps } from "./deps.js";
import { jobChange } from "./service-changes.js";

/**
 * Steps the jobs take the same way with every provider that needs them, each exactly once
 * (`callOnce`): bringing a suspended licence back where that may bill, and the register-then-
 * remove of a provider that moves a licence (to another IP or product) by buying the new one
 * before it removes the old (CLN), so the customer is never without one.
 */

type StepJob = Pick<Job, "id" | "eventId" | "serviceId" | "intent" | "attempts" | "maxAttempts">;

/** The part of a service's licence a call is about: its IP and SKU, and the provider's own id where it has one. */
export function heldPartOf(svc: Pick<ServiceRow, "ip" | "upstream_id">, sku: string): HeldPart {
  return { ip: svc.ip, sku, ...(svc.upstream_id ? { upstreamId: svc.upstream_id } : {}) };
}

/**
 * Whether `h` is the licence `held`, in `state`: of its SKU and, where the service records the
 * provider's own id of it, that licence. After a lost answer another licence of the SKU at the IP
 * (an expired one another service left, one added outside the bridge) says nothing about ours.
 */
export function isHeldLicence(h: Holding, held: Pick<HeldPart, "sku" | "upstreamId">, state: HoldingState): boolean {
  return h.sku === held.sku && h.state === state && (held.upstreamId === undefined || h.upstreamId === held.upstreamId);
}

/**
 * Whether `h`, listed at the new IP after a change of IP whose answer was lost, is the licence
 * `held` moved: where the service records the provider's own id, that licence, in any state (a
 * move keeps it); where it records none (the reseller, CLN), a licence of its SKU in any state but
 * expired, as the reseller's free-text status may be one the bridge does not name (`other`).
 * An expired one is a licence another service left there, not ours moved.
 */
export function isMovedLicence(h: Holding, held: Pick<HeldPart, "sku" | "upstreamId">): boolean {
  if (h.sku !== held.sku) return false;
  return held.upstreamId !== undefined ? h.upstreamId === held.upstreamId : h.state !== "expired";
}

/**
 * Brings `held` back. Where that may bill (Manage2's reactivation fee, CLN's register), it is a
 * charge: the charging rule first, the intent recorded, and after a lost answer the provider's
 * holdings (the licence active at the IP) say whether it happened before it is asked again. So a
 * reactivation is billed once per unsuspension, however often its job is retried.
 *
 * A licence brought back whose provider could not finish (Manage2 refused to move it to the
 * service's new IP or package) is active and billed: the job keeps that in its intent
 * (`unfinished`), so it cannot be cancelled as if nothing had happened, and its retry only
 * finishes, buying nothing. Unless the decision no longer holds (the service is being terminated
 * or suspended again): then it is skipped, and the job queued behind ends the licence.
 */
export async function unsuspendOnce(deps: LifecycleDeps, provider: LicenceProvider, job: StepJob, ctx: JobContext, held: HeldPart, purpose: ChargePurpose): Promise<{ confirmedEarlier: boolean }> {
  const op = `unsuspend:${held.sku}`;
  const bringBack = async (beforeSend?: () => Promise<void>): Promise<Error | undefined> => {
    const outcome = await provider.unsuspend(held, beforeSend ? { beforeSend } : {});
    if (!outcome.done) throw outcome.notHeld;
    return outcome.unfinished;
  };
  if (!provider.capabilities.unsuspendBills) {
    const unfinished = await bringBack();
    if (unfinished) throw unfinished;
    return { confirmedEarlier: false };
  }
  if ((job.intent as UnsuspendIntent | null)?.unfinished === op) {
    await checkCharge(deps, job, purpose);
    const unfinished = await bringBack();
    // Still unfinished: the intent stays as it is, for the next retry.
    if (unfinished) throw heldUnfinished(provider, held, unfinished);
    return { confirmedEarlier: true };
  }
  const r = await callOnce(
    job,
    ctx,
    { op, ip: held.ip },
    async () => (await provider.holdingsAt(held.ip, { skus: [held.sku] })).some((h) => isHeldLicence(h, held, "active")),
    (beforeSend) => bringBack(beforeSend),
    charging(deps, job, purpose),
  );
  if (!r.confirmedEarlier && r.value) {
    const intent: UnsuspendIntent = { ...((job.intent as Intent | null) ?? { op: "" }), unfinished: op };
    await ctx.recordIntent(intent, { durable: true });
    job.intent = intent;
    throw heldUnfinished(provider, held, r.value);
  }
  return { confirmedEarlier: r.confirmedEarlier };
}

/**
 * A licence brought back but not moved blocks its job, whatever the move's error would do alone
 * (a refusal that ends a job failed): a failed job is not unfinished, so a suspension after it
 * would be taken as done already and leave the licence billed. Blocked, it holds the service's
 * queue: a suspension or termination waits behind it, and its retry is skipped for them.
 */
function heldUnfinished(provider: LicenceProvider, held: HeldPart, err: Error): JobBlockedError {
  return new JobBlockedError(
    `${provider.label} brought the licence at ${held.ip} back, active and billed, but could not finish: ${err.message}. ` +
      `Sort that out with ${provider.label}, then retry this job (it buys nothing again)`,
    "upstream_refused",
  );
}

/** An unsuspension's intent once the licence is back: `unfinished` names the step whose provider left the rest to do. */
interface UnsuspendIntent extends Intent {
  unfinished?: string;
}

/**
 * Buys `part` at `ip` for a change (CLN's register of the new IP or type), once; a provider that
 * refuses it as held by someone else blocks the job, the old licence untouched.
 */
export async function buyForChange(
  deps: LifecycleDeps,
  provider: LicenceProvider,
  job: StepJob,
  ctx: JobContext,
  svc: Pick<ServiceRow, "months">,
  ip: string,
  part: Part,
  why: string,
): Promise<{ confirmedEarlier: boolean }> {
  const months = svc.months as BillingCycleMonths;
  const r = await callOnce(
    job,
    ctx,
    { op: `register:${part.sku}@${ip}`, ip, type: part.sku, months },
    async () => (await provider.holdingsAt(ip, { skus: [part.sku] })).some((h) => h.sku === part.sku && h.state === "active"),
    (beforeSend) => provider.buyPart(ip, part, months, { beforeSend }),
    { ...charging(deps, job, "change"), nothingDone: isAlreadyHeld },
  );
  if (!r.confirmedEarlier && isAlreadyHeld(r.value)) {
    throw new JobBlockedError(
      `${provider.label} refused to register ${part.type} at ${ip} for ${why}: another customer of ${provider.label} holds it there. Nothing changed; the licence the service has is kept. ` +
        `Sort out the licence at ${ip} with ${provider.label}, then retry this job`,
      "upstream_refused",
    );
  }
  return { confirmedEarlier: r.confirmedEarlier };
}

/** A change's intent once the licences replacing `replaced` are bought: what it still has to remove. */
interface ReplacingIntent extends Intent {
  replaced?: HeldPart[];
}

/** The licences an earlier attempt of this change bought replacements for and had still to remove, if any. */
export function replacedLeft(job: Pick<StepJob, "intent">): HeldPart[] | undefined {
  return (job.intent as ReplacingIntent | null)?.replaced;
}

/**
 * Once a change has bought the licences that replace `replaced` (CLN's register of the new IP or
 * type), the customer uses the new ones: the service's row says so at once (`change`), so a
 * removal of the old ones that keeps failing never leaves the new licence untracked, nor a later
 * suspension or termination ending the old one only. The job's intent keeps what is left to
 * remove first: its retry finds it whatever the row says now, and it cannot be cancelled while
 * the old licence is billed. Then the old licences are removed (`finishReplacement`).
 */
export async function recordReplacement(
  deps: LifecycleDeps,
  provider: LicenceProvider,
  job: StepJob,
  ctx: JobContext,
  replaced: HeldPart[],
  change: { patch: ServicePatch; history: { action: string; detail: string } },
): Promise<string> {
  const intent: ReplacingIntent = { ...((job.intent as Intent | null) ?? {}), op: "", replaced };
  await ctx.recordIntent(intent, { durable: true });
  job.intent = intent;
  await deps.store.services.change(jobChange(job, job.serviceId!, { patch: change.patch, history: [change.history] }));
  return finishReplacement(deps, provider, job, ctx, replaced);
}

/**
 * Removes the licences a change replaced; one already gone (a repeat after a lost answer) is
 * removed already, so the removal needs no intent of its own. One that another service of the
 * bridge holds now (its order met the licence still there while this removal was refused, and
 * CLN's register answered it already held) is that service's: it is left, the service's history
 * says so, and it is no longer among what is left to remove. What was removed, in words.
 */
export async function finishReplacement(deps: LifecycleDeps, provider: LicenceProvider, job: StepJob, ctx: JobContext, replaced: HeldPart[]): Promise<string> {
  const removed: HeldPart[] = [];
  let left = replaced;
  for (const held of replaced) {
    const [holder] = await deps.store.services.holdingLicence(provider.name, held.ip, held.sku, job.serviceId!);
    if (holder) {
      left = left.filter((h) => h !== held);
      const intent: ReplacingIntent = { ...((job.intent as Intent | null) ?? { op: "" }), replaced: left };
      await ctx.recordIntent(intent, { durable: true });
      job.intent = intent;
      await deps.store.services.change(
        jobChange(job, job.serviceId!, {
          history: [{ action: "licence left", detail: `${held.sku} at ${held.ip} not removed: service ${holder.service_id} holds it now; the licence is that service's` }],
        }),
      );
      continue;
    }
    await provider.terminate(held);
    removed.push(held);
  }
  return removed.length ? `${removed.map((h) => `${h.sku} at ${h.ip}`).join(", ")} removed at ${provider.label}` : `nothing removed at ${provider.label}`;
}
