import { JobFailedError } from "../../jobs/errors.js";
import { AlreadyExistsError, NotFoundError } from "../../reseller/errors.js";
import { bundleComponents, companionsOf, type Protocol, type Upstream } from "../../reseller/upstream.js";
import type { LitespeedVariant, ProductType } from "../../vocabulary/products.js";
import { ALREADY_HELD, askedAbout, type Holding, type HoldingsQuery, type LicenceProvider, type Part, type ProductRef, type ProviderCapabilities, type Purchase, type StatusOutcome } from "../port.js";
import { holdingOf, isoToMs } from "./holdings.js";

/**
 * What the reseller can do. v2.0 sells no bundle and has no suspend or unsuspend: the upstream
 * refuses those calls itself (a JobFailedError naming RESELLER_PROTOCOL), after the intent and
 * the charging rule, as it always has.
 */
export function resellerCapabilities(protocol: Protocol): ProviderCapabilities {
  return {
    renewal: "purchase",
    suspension: "native",
    unsuspendBills: false,
    changeIp: "atomic",
    changeProduct: "litespeed-core",
    list: { status: true, expiry: true },
    bundles: protocol === "v1",
    acquireIsIdempotent: false,
  };
}

/** A bundle's parts are its components, read from its id ("cpanel-cloudlinux"); a licence is its one part. */
function partsOf(product: ProductRef): Part[] {
  if (product.kind === "bundle") return bundleComponents(product.bundle ?? "").map((type) => ({ sku: type, type }));
  const type = product.type as ProductType;
  return [{ sku: type, type }];
}

/** The one product whose variants the reseller changes in place: LiteSpeed, whose cores change-core sets. */
const isLitespeed = (product: ProductRef): boolean => product.kind === "licence" && product.type === "litespeed";

/** "License already exists" is an answer, not a failure: the licence list decides what is there. */
async function unlessHeld(buy: () => Promise<Purchase>): Promise<Purchase> {
  try {
    return await buy();
  } catch (err) {
    if (err instanceof AlreadyExistsError) return ALREADY_HELD;
    throw err;
  }
}

/** A 404 to a status change is the reseller holding no such licence. */
async function statusChange(call: () => Promise<void>): Promise<StatusOutcome> {
  try {
    await call();
    return { done: true };
  } catch (err) {
    if (err instanceof NotFoundError) return { done: false, notHeld: err };
    throw err;
  }
}

/**
 * The reseller (v1, or v2.0 where configured) as a LicenceProvider, over the typed Upstream:
 * its bundles and free cPanel companions, LiteSpeed registered as plain `litespeed` and moved
 * to its cores by change-core, the list's status strings, "License already exists" as a value.
 * Every call is the Upstream's, one for one, within its concurrency limit.
 */
export function createResellerProvider(upstream: Upstream): LicenceProvider {
  // The list at an IP is the reseller's one read there, whatever is asked about.
  const holdingsAt = async (ip: string, query?: HoldingsQuery): Promise<Holding[]> => askedAbout((await upstream.licensesAt(ip)).map(holdingOf), query);
  const buyPart = (ip: string, part: Part, months: Parameters<Upstream["register"]>[2], beforeSend?: () => Promise<void>) =>
    unlessHeld(async () => {
      const a = await upstream.register(ip, part.sku as ProductType, months, { ...(beforeSend ? { beforeSend } : {}) });
      const expiresAt = isoToMs(a.expires_at);
      return { bought: expiresAt === undefined ? {} : { expiresAt } };
    });

  return {
    name: "reseller",
    label: "the reseller",
    capabilities: resellerCapabilities(upstream.protocol),
    partsOf,
    companionsOf: (product) => companionsOf(product.type ?? null, product.bundle ?? null),
    registeredVariant: (product) => (isLitespeed(product) ? "litespeed" : undefined),
    variantOf: (product) => (isLitespeed(product) ? (product.variant ?? "litespeed") : undefined),

    async buy(ip, product, months, options) {
      if (product.kind !== "bundle") return buyPart(ip, partsOf(product)[0]!, months, options?.beforeSend);
      return unlessHeld(async () => {
        const a = await upstream.registerBundle(ip, product.bundle!, months, { ...(options?.beforeSend ? { beforeSend: options.beforeSend } : {}) });
        const expiresAt = isoToMs(a.expires_at);
        return { bought: { bundleKey: a.bundle_key, ...(expiresAt === undefined ? {} : { expiresAt }) } };
      });
    },

    /**
     * A licence: the paid one of its type at the IP. A bundle: the licences there that carry a
     * bundle key, or else its components, when every one of them is there.
     */
    async findPurchase(ip, product) {
      const at = await holdingsAt(ip);
      if (product.kind !== "bundle") {
        const sku = partsOf(product)[0]!.sku;
        const l = at.find((h) => h.sku === sku && !h.free);
        return l ? [l] : undefined;
      }
      const withKey = at.filter((h) => h.bundleKey);
      if (withKey.length > 0) return withKey;
      const components = partsOf(product).map((p) => p.sku);
      const found = at.filter((h) => !h.free && components.includes(h.sku));
      return components.length > 0 && components.every((t) => found.some((h) => h.sku === t)) ? found : undefined;
    },

    buyPart: (ip, part, months, options) => buyPart(ip, part, months, options?.beforeSend),
    holdingsAt,
    list: async () => (await upstream.listLicenses()).map(holdingOf),

    async renew(held, months, options) {
      const a = await upstream.renew(held.ip, held.sku as ProductType, months, { ...(options?.beforeSend ? { beforeSend: options.beforeSend } : {}) });
      const expiresAt = isoToMs(a.expires_at);
      return expiresAt === undefined ? {} : { expiresAt };
    },
    suspend: (held) => statusChange(() => upstream.suspend(held.ip, held.sku as ProductType)),
    unsuspend: (held, options) =>
      statusChange(async () => {
        await options?.beforeSend?.();
        await upstream.unsuspend(held.ip, held.sku as ProductType);
      }),
    // A terminated licence is suspended, and never renewed again.
    terminate: (held) => statusChange(() => upstream.suspend(held.ip, held.sku as ProductType)),
    changeIp: (held, newIp) => upstream.changeIp(held.ip, newIp, held.sku as ProductType),
    changeVariant: (ip, from, to) => upstream.changeCore(ip, from as LitespeedVariant, to as LitespeedVariant),
    // The reseller changes a product only as a LiteSpeed licence's cores (changeVariant); intake refuses any other change.
    changesProductInPlace: () => false,
    changeProduct: () => Promise.reject(new JobFailedError("the reseller changes a licence's product only as a LiteSpeed licence's cores")),
    installCommand: (held) => upstream.installCommand(held.ip, held.sku as ProductType),
    stopCalls: () => upstream.stopCalls(),
  };
}
