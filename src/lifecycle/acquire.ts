import { JobBlockedError } from "../jobs/errors.js";
import type { JobContext } from "../jobs/define.js";
import type { Job } from "../vocabulary/jobs.js";
import { isAlreadyHeld, type Holding, type LicenceProvider, type Part } from "../providers/port.js";
import type { BillingCycleMonths } from "../vocabulary/products.js";
import type { ServiceRow } from "../store/store.js";
import type { LifecycleDeps } from "./deps.js";
import { charging, callOnce, type Intent, type OnceOptions } from "./call-once.js";
import { unsuspendOnce } from "./provider-steps.js";
import { sameIp } from "../vocabulary/ip-address.js";

/** What an order got upstream: licences bought, licences the provider already held and the bridge adopted, or both. */
export interface Acquired {
  /** The earliest term end of the licences, as the provider states it (undefined: it did not say). */
  expiresAt?: number;
  /** Some licence was not bought now: its term is an earlier one, and the paid cycle runs from now. */
  adopted: boolean;
  /** The bundle's key; null when the bundle's licences are not one bundle upstream (a component bought on its own); undefined: not known. */
  bundleKey?: string | null;
  /** The variant the provider holds (undefined: the one a new purchase is held as). */
  upstreamVariant?: string;
  /** The provider's own id of the licence (Manage2's licenseid), where it has one. */
  upstreamId?: string;
  note: string;
}

type AcquireJob = Pick<Job, "id" | "eventId" | "serviceId" | "intent" | "attempts" | "maxAttempts">;

/**
 * Gets the service its licences, exactly once, and only as the provider really holds them.
 *
 * - `buy` (an order): buy the product, once (`callOnce`, the charging rule). When the provider
 *   answers that it already holds it (bought outside the bridge, or kept by a service that was
 *   terminated), its holdings at the IP decide what is there.
 * - `reactivate` (a terminated service ordered again): the holdings first, since its own
 *   licence is normally still there, suspended.
 *
 * From the holdings, every part the product needs is looked at: one that is held is adopted as
 * it is (its variant and expiry as held; brought back if it is suspended; refused, with the
 * reason, in any other state), and one that is missing (a bundle's component) is bought on its
 * own. So a bundle on an IP that kept only its cPanel licence gets its CloudLinux bought.
 */
export async function acquire(deps: LifecycleDeps, job: AcquireJob, ctx: JobContext, svc: ServiceRow, how: "buy" | "reactivate"): Promise<Acquired> {
  const provider = deps.providers.providerFor(svc);
  // A bundle whose components were being bought one by one (an earlier attempt found some held)
  // carries on that way: the bundle call would be refused again, and its intent would hide theirs.
  const byComponent = svc.kind === "bundle" && componentIntent(job);
  if (how === "buy" && !byComponent) {
    const bought = await purchase(deps, provider, job, ctx, svc);
    if (bought) return bought;
  }
  const parts = provider.partsOf(svc);
  const listed = (await provider.holdingsAt(svc.ip, { skus: parts.map((p) => p.sku) })).filter((h) => !h.free);
  const held = parts.flatMap((part) => {
    const holding = listed.find((h) => h.sku === part.sku);
    return holding ? [{ part, holding }] : [];
  });
  if (held.length === 0 && !byComponent) {
    if (how === "reactivate") return acquire(deps, job, ctx, svc, "buy");
    throw new JobBlockedError(
      `${provider.label} refused to register ${parts.map((p) => p.type).join(" and ")} for ${svc.ip} as already existing, but its licence list shows none ` +
        `there; nothing is recorded as held that is not. Check the licence in ${provider.label}'s panel, then retry this job`,
    );
  }

  const notes: string[] = [];
  const expiries: number[] = [];
  let upstreamVariant: string | undefined;
  for (const { part, holding } of held) {
    notes.push(await adopt(deps, provider, job, ctx, svc, part, holding));
    if (holding.expiresAt !== undefined) expiries.push(holding.expiresAt);
    if (holding.variant !== undefined) upstreamVariant = holding.variant;
  }
  const upstreamId = parts.length === 1 ? held[0]?.holding.upstreamId : undefined;
  const missing = parts.filter((p) => !held.some((h) => h.part.sku === p.sku));
  for (const part of missing) {
    const bought = await buyPart(deps, provider, job, ctx, svc, part);
    notes.push(bought.note);
    if (bought.expiresAt !== undefined) expiries.push(bought.expiresAt);
  }
  return {
    expiresAt: expiries.length ? Math.min(...expiries) : undefined,
    adopted: held.length > 0,
    bundleKey: missing.length === 0 ? held.find((h) => h.holding.bundleKey)?.holding.bundleKey : null,
    ...(upstreamVariant ? { upstreamVariant } : {}),
    ...(upstreamId ? { upstreamId } : {}),
    note: `${notes.join("; ")}${missing.length === 0 ? "; nothing bought" : ""}`,
  };
}

/** Whether an earlier attempt of this job announced (or completed) the purchase of one component on its own. */
function componentIntent(job: AcquireJob): boolean {
  const intent = job.intent as Intent | null;
  return [intent?.op ?? "", ...(intent?.done ?? [])].some((op) => op.startsWith("register:"));
}

/** A purchase: the charging rule before it, and an "already held" answer taken as nothing done. */
const buying = (deps: LifecycleDeps, job: AcquireJob): OnceOptions => ({ ...charging(deps, job, "order"), nothingDone: isAlreadyHeld });

/**
 * The intent a purchase carries upstream where the provider keeps one (Manage2's external_notes):
 * the service and the job, the same on every attempt, so a lost answer's licence is told from any
 * other on the IP.
 */
export const purchaseIntent = (svc: Pick<ServiceRow, "service_id">, job: Pick<Job, "id">): string => `${svc.service_id}.${job.id}`;

/**
 * Takes a licence the provider already holds for the service, as it is: brought back if it is
 * suspended (or, where the provider suspends by expiry, expired), once and through the charging
 * rule where that may bill (a terminated service ordered again: Manage2 reactivates its licence).
 */
async function adopt(deps: LifecycleDeps, provider: LicenceProvider, job: AcquireJob, ctx: JobContext, svc: ServiceRow, part: Part, h: Holding): Promise<string> {
  await refuseAnothersLicence(deps, provider, svc, h);
  const how = h.detail ? ` (${h.detail})` : "";
  if (h.state === "suspended" || (h.state === "expired" && provider.capabilities.suspension === "by-expiry")) {
    const held = { ip: svc.ip, sku: part.sku, ...(h.upstreamId ? { upstreamId: h.upstreamId } : {}) };
    const { confirmedEarlier } = await unsuspendOnce(deps, provider, job, ctx, held, "order");
    const billed = provider.capabilities.unsuspendBills ? "" : ", nothing bought for it";
    return `${provider.label} held the ${part.type} licence for ${svc.ip} ${h.state}${how}: ${confirmedEarlier ? "found unsuspended after a lost answer" : "unsuspended"} and adopted it${billed}`;
  }
  if (h.state !== "active") {
    throw new JobBlockedError(
      `${provider.label} holds the ${part.type} licence for ${svc.ip} with status "${h.stateText}"; it is not taken as active. ` +
        `Make it active in ${provider.label}'s panel (or remove it so that it is bought), then retry this job`,
    );
  }
  return `${provider.label} already held the ${part.type} licence for ${svc.ip}${how}: adopted it, nothing bought for it`;
}

/**
 * One licence belongs to one service, by the provider's own id of it too. A live service that
 * records the held licence's id owns it wherever that service's row says it is: Manage2 leaves a
 * suspended service's licence expired at the IP it had, and its unsuspension reactivates that
 * licence by its id and moves it to the service's new IP. Adopted (and reactivated, maybe billed)
 * here as well, one licence would serve two services, and the unsuspension would take it away
 * from this one. So the job blocks, buying and reactivating nothing, until the operator decides.
 */
async function refuseAnothersLicence(deps: LifecycleDeps, provider: LicenceProvider, svc: ServiceRow, h: Holding): Promise<void> {
  if (h.upstreamId === undefined) return;
  const owner = (await deps.store.services.byLicenceId(provider.name, h.upstreamId)).find((s) => s.service_id !== svc.service_id);
  if (!owner) return;
  const moving = owner.status === "suspended" && provider.capabilities.suspension !== "native" && !sameIp(owner.ip, h.ip);
  const state = moving ? `suspended; moving to ${owner.ip} when it is unsuspended` : sameIp(owner.ip, h.ip) ? owner.status : `${owner.status}, recorded at ${owner.ip}`;
  const wayOut = moving
    ? `Unsuspend service ${owner.service_id} (its licence moves to ${owner.ip}, and this job then buys one of its own at ${svc.ip}), or terminate ${owner.service_id} if its licence is to be this service's`
    : `Terminate service ${owner.service_id} if its licence is to be this service's, or sort out which service owns it (reconcile shows where each licence is)`;
  throw new JobBlockedError(
    `${provider.label}'s licence ${h.upstreamId} at ${h.ip} is service ${owner.service_id}'s (${state}): one licence belongs to one service, ` +
      `so nothing was bought or reactivated for ${svc.service_id}. ${wayOut}, then retry this job`,
    "ip_in_use",
  );
}

/** Buys one part of a bundle on its own, once; one the provider turns out to hold meanwhile is adopted. */
async function buyPart(
  deps: LifecycleDeps,
  provider: LicenceProvider,
  job: AcquireJob,
  ctx: JobContext,
  svc: ServiceRow,
  part: Part,
): Promise<{ expiresAt?: number; note: string }> {
  const months = svc.months as BillingCycleMonths;
  let found: Holding | undefined;
  const lookup = async () => (found = (await provider.holdingsAt(svc.ip, { skus: [part.sku] })).find((h) => h.sku === part.sku && !h.free));
  const r = await callOnce(
    job,
    ctx,
    { op: `register:${part.sku}`, ip: svc.ip, type: part.sku, months },
    async () => (await lookup()) !== undefined,
    (beforeSend) => provider.buyPart(svc.ip, part, months, { beforeSend }),
    buying(deps, job),
  );
  if (r.confirmedEarlier) return { expiresAt: found?.expiresAt, note: `${part.type} found upstream after a lost answer; not bought again` };
  if ("bought" in r.value) return { expiresAt: r.value.bought.expiresAt, note: `${part.type} bought for ${months} month(s)` };
  const held = await lookup();
  if (!held) throw new JobBlockedError(`${provider.label} refused to register ${part.type} for ${svc.ip} as already existing, but its licence list shows none there`);
  return { expiresAt: held.expiresAt, note: await adopt(deps, provider, job, ctx, svc, part, held) };
}

/** Buys the whole product (a licence, or a bundle in one call), once. Undefined: the provider already holds it. */
async function purchase(deps: LifecycleDeps, provider: LicenceProvider, job: AcquireJob, ctx: JobContext, svc: ServiceRow): Promise<Acquired | undefined> {
  const months = svc.months as BillingCycleMonths;
  const bundle = svc.kind === "bundle";
  const intent = purchaseIntent(svc, job);
  // After a lost answer: what the purchase left at the IP, as the provider finds it.
  let earlier: Holding[] | undefined;
  const result = await callOnce(
    job,
    ctx,
    bundle ? { op: "register_bundle", ip: svc.ip, bundle: svc.bundle, months } : { op: "register", ip: svc.ip, type: svc.type, months },
    async () => (earlier = await provider.findPurchase(svc.ip, svc, { intent })) !== undefined,
    (beforeSend) => provider.buy(svc.ip, svc, months, { beforeSend, intent }),
    // The upstream refuses a second purchase of the same licence ("already exists"), but not
    // while the first is still being carried out: the settle window guards that race.
    buying(deps, job),
  );
  if (result.confirmedEarlier) {
    const h = earlier?.[0];
    if (bundle) return { expiresAt: h?.expiresAt, bundleKey: h?.bundleKey, adopted: false, note: "bundle found upstream after a lost answer; not bought again" };
    return {
      expiresAt: h?.expiresAt,
      adopted: false,
      ...(h?.variant ? { upstreamVariant: h.variant } : {}),
      ...(h?.upstreamId ? { upstreamId: h.upstreamId } : {}),
      note: "licence found upstream after a lost answer; not bought again",
    };
  }
  if (!("bought" in result.value)) return undefined;
  const { bought } = result.value;
  if (bundle) return { expiresAt: bought.expiresAt, bundleKey: bought.bundleKey, adopted: false, note: `bundle ${svc.bundle} registered` };
  return {
    expiresAt: bought.expiresAt,
    adopted: false,
    ...(bought.upstreamId ? { upstreamId: bought.upstreamId } : {}),
    note: `${svc.type} registered${provider.capabilities.renewal === "purchase" ? ` for ${months} month(s)` : `; ${provider.label} bills it each month it is active`}`,
  };
}
