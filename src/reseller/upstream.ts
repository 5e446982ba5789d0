import { JobFailedError } from "../jobs/errors.js";
import { concurrencyLimit } from "./limit.js";
import type { ListedLicense, UpstreamLicense } from "./answers.js";
import type { V1Client } from "./v1.js";
import type { V2Client } from "./v2.js";
import {
  CORE_BY_VARIANT,
  PRODUCT_TYPES,
  type BillingCycleMonths,
  type LitespeedVariant,
  type ProductType,
} from "../vocabulary/products.js";

export type Protocol = "v1" | "v2";

/** For a charging call. */
export interface ChargeOptions {
  /**
   * Runs once the call holds its upstream slot, right before the request is sent; a throw stops
   * the call unsent. The fence of a job that may have lost its lease while it waited for the slot.
   */
  beforeSend?: () => Promise<void>;
}

/**
 * What the lifecycle asks of the reseller, whichever interface provisions. Reads (the licence
 * list, install commands) always use v1: v2.0 has none, and exactly-once needs the list.
 */
export interface Upstream {
  readonly protocol: Protocol;
  register(ip: string, type: ProductType, months: BillingCycleMonths, options?: ChargeOptions): Promise<{ expires_at?: string }>;
  renew(ip: string, type: ProductType, months: BillingCycleMonths, options?: ChargeOptions): Promise<{ expires_at?: string }>;
  suspend(ip: string, type: ProductType): Promise<void>;
  unsuspend(ip: string, type: ProductType): Promise<void>;
  changeIp(ip: string, newip: string, type: ProductType): Promise<void>;
  changeCore(ip: string, from: LitespeedVariant, to: LitespeedVariant): Promise<void>;
  registerBundle(ip: string, bundle: string, months: BillingCycleMonths, options?: ChargeOptions): Promise<{ bundle_key: string; expires_at?: string }>;
  /** The upstream's licences at one IP. */
  licensesAt(ip: string): Promise<UpstreamLicense[]>;
  /** The whole list, as compact records: reconcile and the adoption plan read it at any size of book. */
  listLicenses(): Promise<ListedLicense[]>;
  installCommand(ip: string, type: ProductType): Promise<string>;
  /** At shutdown: calls not yet started fail with JobInterruptedError (their jobs go back to the queue). */
  stopCalls(): void;
}

function notOnV2(operation: string): never {
  throw new JobFailedError(
    `RESELLER_PROTOCOL=v2: the reseller's v2.0 interface has no ${operation} operation. ` +
      `Do it in the reseller's panel, or set RESELLER_PROTOCOL=v1 and retry this job.`,
  );
}

export interface UpstreamOptions {
  /** Calls in flight at once (WORKER_CONCURRENCY). (Default: unlimited) */
  maxInFlight?: number;
}

export function createUpstream(protocol: Protocol, v1: V1Client, v2: V2Client | null, options: UpstreamOptions = {}): Upstream {
  const upstream = directUpstream(protocol, v1, v2);
  if (!options.maxInFlight) return upstream;
  const limit = concurrencyLimit(options.maxInFlight);
  const limited = { protocol } as Record<string, unknown>;
  for (const [name, fn] of Object.entries(upstream)) {
    if (typeof fn === "function") limited[name] = (...args: unknown[]) => limit(() => (fn as (...a: unknown[]) => Promise<unknown>)(...args));
  }
  limited.stopCalls = () => limit.close();
  return limited as unknown as Upstream;
}

function directUpstream(protocol: Protocol, v1: V1Client, v2: V2Client | null): Upstream {
  if (protocol === "v2" && !v2) throw new Error("RESELLER_PROTOCOL=v2 needs the legacy interface configured");
  const legacy = protocol === "v2" ? v2! : null;
  return {
    protocol,
    async register(ip, type, billingcycle, options) {
      await options?.beforeSend?.();
      if (legacy) {
        await legacy.register({ ip, type, billingcycle });
        return {};
      }
      const a = await v1.register({ ip, type, billingcycle });
      return a.expires_at ? { expires_at: a.expires_at } : {};
    },
    async renew(ip, type, billingcycle, options) {
      await options?.beforeSend?.();
      if (legacy) {
        await legacy.renew({ ip, type, billingcycle });
        return {};
      }
      const a = await v1.renew({ ip, type, billingcycle });
      return a.expires_at ? { expires_at: a.expires_at } : {};
    },
    async suspend(ip, type) {
      if (legacy) notOnV2("suspend");
      await v1.suspend({ ip, type });
    },
    async unsuspend(ip, type) {
      if (legacy) notOnV2("unsuspend");
      await v1.unsuspend({ ip, type });
    },
    async changeIp(ip, newip, type) {
      if (legacy) await legacy.changeIp({ ip, type, newip });
      else await v1.changeIp({ ip, newip, type });
    },
    async changeCore(ip, from, to) {
      if (legacy) await legacy.changeCore({ ip, core: CORE_BY_VARIANT[to] });
      else await v1.changeCore({ ip, old_type: from, new_type: to });
    },
    async registerBundle(ip, bundle, billingcycle, options) {
      if (legacy) notOnV2("bundle");
      await options?.beforeSend?.();
      const a = await v1.registerBundle({ ip, bundle, billingcycle });
      return a.expires_at ? { bundle_key: a.bundle_key, expires_at: a.expires_at } : { bundle_key: a.bundle_key };
    },
    // Only the licences at this IP are made of the list's items, the rest dropped as they are read.
    licensesAt: (ip) => v1.licensesAt(ip),
    listLicenses: () => v1.listedLicenses(),
    async installCommand(ip, type) {
      return (await v1.installCommand({ ip, type })).command;
    },
    stopCalls() {},
  };
}


/**
 * The licence types a bundle is made of, read from its id ("cpanel-cloudlinux"): the
 * upstream documents no bundle catalogue, and suspend, renew and change-ip address licences.
 */
export function bundleComponents(bundle: string): ProductType[] {
  return bundle.split(/[-+_]/).filter((t): t is ProductType => (PRODUCT_TYPES as readonly string[]).includes(t));
}

/** Free licences that come with a licence of this type. */
export function companionsOf(type: string | null, bundle: string | null): string[] {
  const types = type ? [type] : bundle ? bundleComponents(bundle) : [];
  return types.includes("cpanel") ? ["softaculous", "sitepad", "ssl"] : [];
}
