import type { ProductType } from "../../vocabulary/products.js";
import { clnDefaultInstall } from "../../catalog/install-command.js";
import { JobBlockedError, JobFailedError } from "../../jobs/errors.js";
import { AlreadyExistsError, NotFoundError } from "../../reseller/errors.js";
import { canConvert, clnTypeInfo, isClnType, type ClnType } from "../../vocabulary/cln-types.js";
import { productOf, skuOf, installCommandOf, type CatalogueOf } from "../catalogue.js";
import { ALREADY_HELD, askedAbout, type Holding, type HoldingsQuery, type LicenceProvider, type ProductRef, type Purchase } from "../port.js";
import type { ClnLicense } from "./answers.js";
import { CLN_CAPABILITIES } from "./capabilities.js";
import type { ClnClient } from "./client.js";

/**
 * CloudLinux CLN's IP licences as a LicenceProvider, over the typed client: a product is one
 * licence of a CLN type (`sku`, the type number) on an IP, which is CLN's whole identity of a
 * licence. A licence is held (and billed each month) while it is registered, and not at all
 * once removed: so a suspension removes it, an unsuspension registers it again, and a licence
 * the account holds is always an active one.
 *
 * - buy (and unsuspend): `register`, which answers the licence already there when this account
 *   holds it ("returns information about created or already registered license"): counted as
 *   bought, never bought twice. Refused because another customer holds it: "already held", and
 *   the holdings (this account's) then say it is not ours.
 * - findPurchase: `server?ip`, this account's licences on the IP.
 * - suspend, terminate: `remove`; `data: false` (none of ours there) is a suspension already
 *   made (a repeat after a lost answer), and for a termination nothing left to end.
 * - changeIp: register the new IP, then remove the old: never a moment without a licence, and a
 *   register refused leaves the old one (the lifecycle takes the two steps itself, each once).
 * - changeProduct: `convert` where CLN offers it (an Imunify licence into an Imunify360 tier);
 *   `data: false` is no conversion (unless the new type is already there: a repeat).
 * Sources: CloudLinux REST API, "IP-based licenses API" (docs.cloudlinux.com/cloudlinux_rest_api.pdf);
 * cloudlinux/cloudlinux-whmcs-plugin (what CloudLinux's own module does, and where it loses a
 * licence); notes/providers-research.md part B.
 */

export interface ClnProviderOptions {
  /** The catalogue of the moment: each product's install command. */
  catalog: CatalogueOf;
}

const LABEL = "CloudLinux CLN";

export function createClnProvider(client: ClnClient, options: ClnProviderOptions): LicenceProvider {
  const typeNumber = (sku: string): ClnType => {
    const n = Number(sku);
    if (!isClnType(n)) throw new JobFailedError(`${sku} is not a CLN licence type`);
    return n;
  };
  const holdingOf = (l: ClnLicense): Holding => {
    const product = productOf(options.catalog(), "cln", { sku: String(l.type) });
    return {
      provider: "cln",
      ip: l.ip,
      sku: String(l.type),
      type: product?.kind === "licence" ? product.type : (clnTypeInfo(l.type)?.productType ?? clnTypeInfo(l.type)?.name ?? `type ${l.type}`),
      // CLN lists only what the account holds, and everything it holds is in use (billed).
      state: "active",
      detail: l.registered ? "a server has registered with it" : "no server has registered with it yet",
    };
  };
  // `server?ip` reads this account's licences at the IP alone, whatever is asked about.
  const holdingsAt = async (ip: string, query?: HoldingsQuery): Promise<Holding[]> => askedAbout((await client.server({ ips: [ip] })).map(holdingOf), query);

  async function register(ip: string, sku: string, beforeSend?: () => Promise<void>): Promise<Purchase> {
    await beforeSend?.();
    try {
      await client.register({ ip, type: typeNumber(sku) });
      return { bought: {} };
    } catch (err) {
      // Another customer's licence (this account's own is answered, not refused).
      if (err instanceof AlreadyExistsError) return ALREADY_HELD;
      throw err;
    }
  }

  async function remove(ip: string, sku: string): Promise<boolean> {
    return (await client.remove({ ip, type: typeNumber(sku) })).removed;
  }

  return {
    name: "cln",
    label: LABEL,
    capabilities: CLN_CAPABILITIES,
    partsOf: (product: ProductRef) => [{ sku: skuOf(options.catalog(), "cln", product), type: (product.type ?? "cloudlinux") as ProductType }],
    companionsOf: () => [],
    registeredVariant: () => undefined,
    variantOf: () => undefined,

    buy: (ip, product, _months, o) => register(ip, skuOf(options.catalog(), "cln", product), o?.beforeSend),
    buyPart: (ip, part, _months, o) => register(ip, part.sku, o?.beforeSend),

    async findPurchase(ip, product) {
      const type = typeNumber(skuOf(options.catalog(), "cln", product));
      const held = await client.find({ ip, type });
      return held ? [holdingOf(held)] : undefined;
    },

    holdingsAt,
    list: async () => (await client.list()).map(holdingOf),

    renew: () => Promise.reject(new JobFailedError(`${LABEL} bills a licence each month it is registered: there is nothing to renew`)),

    async suspend(held) {
      // Removed already (a repeat after a lost answer), or never there: suspended either way.
      await remove(held.ip, held.sku);
      return { done: true };
    },

    async unsuspend(held, o) {
      const outcome = await register(held.ip, held.sku, o?.beforeSend);
      if ("alreadyHeld" in outcome) {
        throw new AlreadyExistsError({
          operation: "cln.register",
          message: `${LABEL} refused to register type ${held.sku} on ${held.ip} again: another customer holds it now`,
        });
      }
      return { done: true };
    },

    async terminate(held) {
      if (await remove(held.ip, held.sku)) return { done: true };
      return { done: false, notHeld: new NotFoundError({ operation: "cln.remove", message: `${LABEL} has no licence of type ${held.sku} on ${held.ip}` }) };
    },

    async changeIp(held, newIp) {
      const outcome = await register(newIp, held.sku);
      if ("alreadyHeld" in outcome) {
        throw new AlreadyExistsError({ operation: "cln.register", message: `${LABEL} refused to register type ${held.sku} on ${newIp}: another customer holds it` });
      }
      await remove(held.ip, held.sku);
    },
    changeVariant: () => Promise.reject(new JobFailedError(`${LABEL} has no variants to change`)),

    changesProductInPlace: (from, to) => canConvert(Number(from), Number(to)),
    async changeProduct(held, to) {
      const type = typeNumber(held.sku);
      const typeTo = typeNumber(to.sku);
      const { converted } = await client.convert({ ip: held.ip, type, typeTo });
      if (converted) return;
      // Not converted: a repeat after a lost answer finds the new type there already.
      if (await client.find({ ip: held.ip, type: typeTo })) return;
      throw new JobBlockedError(
        `${LABEL} did not convert type ${type} on ${held.ip} into ${typeTo} (it answered data: false: "impossible to update IP license: not found, not owned by user etc."); ` +
          "the old licence stands and nothing was bought. Check the licence in CLN, then retry this job",
        "upstream_refused",
      );
    },

    installCommand: async (held, product) => installCommandOf(options.catalog(), "cln", held.ip, { sku: held.sku, ...(product?.product_id ? { product_id: product.product_id } : {}) }, clnDefaultInstall(Number(held.sku))),

    stopCalls: () => undefined,
  };
}
