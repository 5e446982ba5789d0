import { JobBlockedError } from "../jobs/errors.js";
import type { JobContext } from "../jobs/define.js";
import type { Job } from "../vocabulary/jobs.js";
import type { UpstreamLicense } from "../reseller/answers.js";
import { AlreadyExistsError } from "../reseller/errors.js";
import { bundleComponents } from "../reseller/upstream.js";
import { LITESPEED_VARIANTS, type BillingCycleMonths, type LitespeedVariant, type ProductType } from "../vocabulary/products.js";
import type { ServiceRow } from "../store/store.js";
import type { LifecycleDeps } from "./deps.js";
import { charging, callOnce, type Intent } from "./call-once.js";
import { isoToMs } from "./record.js";
import { licenseTypes } from "./service-changes.js";

/** What an order got upstream: licences bought, licences the reseller already held and the bridge adopted, or both. */
export interface Acquired {
  /** The earliest term end of the licences, as the reseller states it (undefined: it did not say). */
  expiresAt?: number;
  /** Some licence was not bought now: its term is an earlier one, and the paid cycle runs from now. */
  adopted: boolean;
  /** The bundle's key; null when the bundle's licences are not one bundle upstream (a component bought on its own); undefined: not known. */
  bundleKey?: string | null;
  /** The LiteSpeed variant the reseller holds (a new registration is plain `litespeed`). */
  upstreamVariant?: LitespeedVariant;
  note: string;
}

type AcquireJob = Pick<Job, "id" | "eventId" | "serviceId" | "intent" | "attempts" | "maxAttempts">;

/**
 * Gets the service its licences, exactly once, and only as the reseller really holds them.
 *
 * - `buy` (an order): register the licence or bundle. When the reseller answers that it already
 *   has it ("License already exists": bought outside the bridge, or left suspended by a service
 *   that was terminated), the licence list decides what is there.
 * - `reactivate` (a terminated service ordered again): the list first, since its own licence is
 *   normally still there, suspended.
 *
 * From the list, every licence the product needs is looked at: one that is there is adopted as it
 * is (its variant and expiry as listed; unsuspended if it is suspended; refused, with the reason,
 * in any other state), and one that is missing (a bundle's component) is bought on its own. So a
 * bundle on an IP that kept only its cPanel licence gets its CloudLinux bought, and a LiteSpeed
 * licence held as `litespeed8` is recorded as `litespeed8` (the variant step then changes its core).
 */
export async function acquire(deps: LifecycleDeps, job: AcquireJob, ctx: JobContext, svc: ServiceRow, how: "buy" | "reactivate"): Promise<Acquired> {
  // A bundle whose components were being bought one by one (an earlier attempt found some held)
  // carries on that way: the bundle call would be refused again, and its intent would hide theirs.
  const byComponent = svc.kind === "bundle" && componentIntent(job);
  if (how === "buy" && !byComponent) {
    try {
      return await purchase(deps, job, ctx, svc);
    } catch (err) {
      if (!(err instanceof AlreadyExistsError)) throw err;
    }
  }
  const types = licenseTypes(svc);
  const listed = (await deps.upstream.licensesAt(svc.ip)).filter((l) => !l.free);
  const held = types.flatMap((type) => {
    const l = listed.find((x) => x.type === type);
    return l ? [{ type, license: l }] : [];
  });
  if (held.length === 0 && !byComponent) {
    if (how === "reactivate") return acquire(deps, job, ctx, svc, "buy");
    throw new JobBlockedError(
      `the reseller refused to register ${types.join(" and ")} for ${svc.ip} as already existing, but its licence list shows none ` +
        "there; nothing is recorded as held that is not. Check the licence in the reseller's panel, then retry this job",
    );
  }

  const notes: string[] = [];
  const expiries: number[] = [];
  let upstreamVariant: LitespeedVariant | undefined;
  for (const { type, license } of held) {
    notes.push(await adopt(deps, svc, type, license));
    const end = isoToMs(license.expires_at);
    if (end !== undefined) expiries.push(end);
    if (type === "litespeed") upstreamVariant = heldVariant(license);
  }
  const missing = types.filter((t) => !held.some((h) => h.type === t));
  for (const type of missing) {
    const bought = await registerComponent(deps, job, ctx, svc, type);
    notes.push(bought.note);
    if (bought.expiresAt !== undefined) expiries.push(bought.expiresAt);
  }
  return {
    expiresAt: expiries.length ? Math.min(...expiries) : undefined,
    adopted: held.length > 0,
    bundleKey: missing.length === 0 ? held.find((h) => h.license.bundle_key)?.license.bundle_key : null,
    ...(upstreamVariant ? { upstreamVariant } : {}),
    note: `${notes.join("; ")}${missing.length === 0 ? "; nothing bought" : ""}`,
  };
}

/** Whether an earlier attempt of this job announced (or completed) the purchase of one component on its own. */
function componentIntent(job: AcquireJob): boolean {
  const intent = job.intent as Intent | null;
  return [intent?.op ?? "", ...(intent?.done ?? [])].some((op) => op.startsWith("register:"));
}

const isSuspended = (l: UpstreamLicense) => l.status !== undefined && /suspend/i.test(l.status);
const isActive = (l: UpstreamLicense) => l.status === undefined || /^(active|ok|enabled)$/i.test(l.status.trim());

/** The LiteSpeed variant a listed licence has; a list that shows none is read as the plain one. */
function heldVariant(l: UpstreamLicense): LitespeedVariant {
  return (LITESPEED_VARIANTS as readonly string[]).includes(l.variant ?? "") ? (l.variant as LitespeedVariant) : "litespeed";
}

/** Takes a licence the reseller already holds for the service, as it is: unsuspended if it was suspended. */
async function adopt(deps: LifecycleDeps, svc: ServiceRow, type: ProductType, l: UpstreamLicense): Promise<string> {
  const variant = type === "litespeed" ? ` (${l.variant ? `variant ${l.variant}` : "the list shows no variant: taken as litespeed"})` : "";
  if (isSuspended(l)) {
    await deps.upstream.unsuspend(svc.ip, type);
    return `the reseller held the ${type} licence for ${svc.ip} suspended${variant}: unsuspended and adopted it, nothing bought for it`;
  }
  if (!isActive(l)) {
    throw new JobBlockedError(
      `the reseller holds the ${type} licence for ${svc.ip} with status "${l.status}"; it is not taken as active. ` +
        "Make it active in the reseller's panel (or remove it so that it is bought), then retry this job",
    );
  }
  return `the reseller already held the ${type} licence for ${svc.ip}${variant}: adopted it, nothing bought for it`;
}

/** Buys one component of a bundle on its own, once; one the reseller turns out to hold meanwhile is adopted. */
async function registerComponent(
  deps: LifecycleDeps,
  job: AcquireJob,
  ctx: JobContext,
  svc: ServiceRow,
  type: ProductType,
): Promise<{ expiresAt?: number; note: string }> {
  const months = svc.months as BillingCycleMonths;
  let found: UpstreamLicense | undefined;
  const lookup = async () => (found = (await deps.upstream.licensesAt(svc.ip)).find((l) => l.type === type && !l.free));
  try {
    const r = await callOnce(
      job,
      ctx,
      { op: `register:${type}`, ip: svc.ip, type, months },
      async () => (await lookup()) !== undefined,
      (beforeSend) => deps.upstream.register(svc.ip, type, months, { beforeSend }),
      charging(deps, job, "order"),
    );
    if (r.confirmedEarlier) return { expiresAt: isoToMs(found?.expires_at), note: `${type} found upstream after a lost answer; not bought again` };
    return { expiresAt: isoToMs(r.value.expires_at), note: `${type} bought for ${months} month(s)` };
  } catch (err) {
    if (!(err instanceof AlreadyExistsError)) throw err;
    const l = await lookup();
    if (!l) throw new JobBlockedError(`the reseller refused to register ${type} for ${svc.ip} as already existing, but its licence list shows none there`);
    return { expiresAt: isoToMs(l.expires_at), note: await adopt(deps, svc, type, l) };
  }
}

/** Registers the whole product (a licence, or a bundle in one call), once. */
async function purchase(deps: LifecycleDeps, job: AcquireJob, ctx: JobContext, svc: ServiceRow): Promise<Acquired> {
  const { upstream } = deps;
  const months = svc.months as BillingCycleMonths;

  if (svc.kind === "bundle") {
    const bundle = svc.bundle!;
    const components = bundleComponents(bundle);
    let earlier: UpstreamLicense[] = [];
    // After a lost answer: the bundle was bought if the list shows it (its key, or all its components).
    const found = async (): Promise<boolean> => {
      const at = await upstream.licensesAt(svc.ip);
      const withKey = at.filter((l) => l.bundle_key);
      earlier = withKey.length > 0 ? withKey : at.filter((l) => !l.free && components.includes(l.type as ProductType));
      return withKey.length > 0 || (components.length > 0 && components.every((t) => earlier.some((l) => l.type === t)));
    };
    const result = await callOnce(
      job,
      ctx,
      { op: "register_bundle", ip: svc.ip, bundle, months },
      found,
      (beforeSend) => upstream.registerBundle(svc.ip, bundle, months, { beforeSend }),
      charging(deps, job, "order"),
    );
    if (result.confirmedEarlier) {
      const l = earlier[0];
      return { expiresAt: isoToMs(l?.expires_at), bundleKey: l?.bundle_key, adopted: false, note: "bundle found upstream after a lost answer; not bought again" };
    }
    return { expiresAt: isoToMs(result.value.expires_at), bundleKey: result.value.bundle_key, adopted: false, note: `bundle ${bundle} registered` };
  }

  const type = svc.type as ProductType;
  let earlier: UpstreamLicense | undefined;
  const result = await callOnce(
    job,
    ctx,
    { op: "register", ip: svc.ip, type, months },
    async () => (earlier = (await upstream.licensesAt(svc.ip)).find((l) => l.type === type && !l.free)) !== undefined,
    (beforeSend) => upstream.register(svc.ip, type, months, { beforeSend }),
    // The upstream refuses a second register of the same ip and type ("already exists"), but
    // not while the first is still being carried out: the settle window guards that race.
    charging(deps, job, "order"),
  );
  if (result.confirmedEarlier) {
    return {
      expiresAt: isoToMs(earlier?.expires_at),
      adopted: false,
      ...(type === "litespeed" && earlier ? { upstreamVariant: heldVariant(earlier) } : {}),
      note: "licence found upstream after a lost answer; not bought again",
    };
  }
  return { expiresAt: isoToMs(result.value.expires_at), adopted: false, note: `${type} registered for ${months} month(s)` };
}
