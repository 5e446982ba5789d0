import type { ProductType } from "../../vocabulary/products.js";
import { JobBlockedError, JobFailedError } from "../../jobs/errors.js";
import { NotFoundError, ResellerError } from "../../reseller/errors.js";
import { manage2DefaultInstall } from "../../catalog/install-command.js";
import { sameIp } from "../../vocabulary/ip-address.js";
import { productOf, skuOf, installCommandOf, type CatalogueOf } from "../catalogue.js";
import { ALREADY_HELD, type HeldPart, type Holding, type HoldingsQuery, type LicenceProvider, type Part, type ProductRef, type StatusOutcome } from "../port.js";
import type { Manage2License } from "./answers.js";
import type { Manage2Client } from "./client.js";
import { intentTokenIn } from "./intent.js";
import { createManage2Licences, MANAGE2_CAPABILITIES, type Manage2Licences } from "./licences.js";

/**
 * cPanel Manage2 as a LicenceProvider, over Manage2Licences (licences.ts): a product is one
 * licence of a package (`sku`, the package id), filed in the catalogue product's group (else
 * MANAGE2_GROUP_ID, else the account's default group).
 *
 * - buy: XMLlicenseAdd with the job's intent in `external_notes`, never reactivating an expired
 *   licence on the way (`reactivateok=0`: that is an unsuspension's, by its id). A refusal
 *   because a licence of the package is already on the IP (active, or expired) is "already
 *   held", whatever its words (only "Empty license." is public): the holdings decide.
 * - findPurchase: after a lost add answer, the licence on (IP, package) whose notes carry the
 *   intent; another licence there is not this purchase.
 * - holdings: statuses 1 active, 2 expired (what the bridge's suspension leaves, which a
 *   reactivation brings back), 4 suspended by cPanel ("other": the operator's, no API call
 *   undoes it). XMLRawlookup lists an IP's active licences, XMLlicenseInfo with `expired=1` the
 *   rest (Upmind's provider, commit 2fa2043: `liscid` alone finds no expired licence), by
 *   `packageid` for the packages a caller asks about (docs.cpanel.net/manage2/api/
 *   manage2-api-list-license-information/), not the account's whole history.
 * - suspend and terminate expire the licence (XMLlicenseExpire; no suspend call, billing ends),
 *   one cPanel suspended too (billed again once cPanel lifts its suspension, unless expired);
 *   unsuspend reactivates the same licence by its id (XMLlicenseReActivate, `dryrun=0`), then,
 *   if the service moved or changed package while it was suspended (an expired licence cannot
 *   be transferred or updated), moves it there.
 * - changeIp: XMLtransfer of this package's licence only; changeProduct: XMLpackageUpdate, a
 *   refusal blocking the job with Manage2's reason.
 * Sources: notes/providers-research.md part A (docs.cpanel.net/manage2/api/ pages; Upmind's and
 * Blesta's callers; support.cpanel.net on billing and reactivation fees).
 */

export interface Manage2ProviderOptions {
  /** The catalogue of the moment: each product's group and install command. */
  catalog: CatalogueOf;
  /** MANAGE2_GROUP_ID, for a product that names no group (the catalogue has filled it in already). (Default: the account's default group) */
  groupId?: number;
}

const LABEL = "cPanel Manage2";

export function createManage2Provider(client: Manage2Client, options: Manage2ProviderOptions): LicenceProvider {
  const licences: Manage2Licences = createManage2Licences(client, options.groupId === undefined ? {} : { groupid: options.groupId });
  const sku = (product: ProductRef) => skuOf(options.catalog(), "manage2", product);
  /** The product type people see for a package: the catalogue's, else Manage2's package name. */
  const typeOf = (packageid: number, fallback?: string): string => {
    const product = productOf(options.catalog(), "manage2", { sku: String(packageid) });
    return product?.kind === "licence" ? product.type : (fallback ?? `package ${packageid}`);
  };
  const holdingOf = (l: Manage2License): Holding => {
    const h: Holding = {
      provider: "manage2",
      ip: l.ip,
      sku: String(l.packageid),
      type: typeOf(l.packageid, l.package_name),
      state: l.status === "active" ? "active" : l.status === "expired" ? "expired" : "other",
      stateText: l.status === "suspended" ? "suspended by cPanel" : l.status,
      upstreamId: String(l.licenseid),
      detail: `licence ${l.licenseid}`,
    };
    const tag = intentTokenIn(l.external_notes);
    if (tag !== undefined) h.intentTag = tag;
    return h;
  };

  /** The licences of this package on this IP, active ones first. */
  const at = async (ip: string, packageid: number): Promise<Manage2License[]> =>
    (await licences.findAt({ ip, packageid, includeExpired: true })).sort(byRank);

  /** The licence a service holds: by its recorded id, else the one of its package on its IP. */
  async function licenceOf(held: HeldPart): Promise<Manage2License | undefined> {
    if (held.upstreamId !== undefined && /^\d+$/.test(held.upstreamId)) {
      const byId = await licences.find(Number(held.upstreamId));
      if (byId) return byId;
    }
    return (await at(held.ip, Number(held.sku)))[0];
  }

  const notHeld = (held: HeldPart): StatusOutcome => ({
    done: false,
    notHeld: new NotFoundError({ operation: "manage2.licence", message: `${LABEL} has no licence of package ${held.sku} on ${held.ip}` }),
  });

  async function buyOne(ip: string, packageSku: string, product: ProductRef | undefined, opts: { beforeSend?: () => Promise<void>; intent?: string } = {}) {
    const packageid = Number(packageSku);
    const purchase = product ? productOf(options.catalog(), "manage2", product)?.purchase : undefined;
    const group = purchase?.provider === "manage2" && purchase.groupId !== null ? purchase.groupId : undefined;
    await opts.beforeSend?.();
    try {
      const added = await licences.acquire({ ip, sku: { packageid, ...(group === undefined ? {} : { groupid: group }) }, intent: opts.intent ?? `order:${ip}:${packageid}` });
      return { bought: { upstreamId: String(added.licenseid) } };
    } catch (err) {
      // Refused, not lost: if a licence of the package is on the IP, that is why.
      if (refusedByAnswer(err) && (await at(ip, packageid)).length > 0) return ALREADY_HELD;
      throw err;
    }
  }

  /**
   * The active licences at the IP (XMLRawlookup), and the expired ones, which Manage2 lists only
   * for the whole account or by package: so by each package asked about.
   */
  async function holdingsAt(ip: string, query: HoldingsQuery = {}): Promise<Holding[]> {
    // A SKU that is no package id is no Manage2 licence's.
    const packages = query.skus === undefined ? undefined : [...new Set(query.skus)].filter((s) => /^\d+$/.test(s)).map(Number);
    const asked = (l: Manage2License): boolean => packages === undefined || packages.includes(l.packageid);
    const active = (await client.rawLookup({ ip, all: true })).filter(asked);
    const expired: Manage2License[] = [];
    if (packages === undefined) {
      // Asked about every licence at the IP (no lifecycle caller asks so: each names its
      // packages): Manage2 lists no expired licence by IP, so the whole account's are read.
      expired.push(...(await client.licenseInfo({ expired: true })));
    } else {
      for (const packageid of packages) expired.push(...(await client.licenseInfo({ expired: true, packageid })));
    }
    const byId = new Map<number, Manage2License>();
    for (const l of [...active, ...expired.filter((e) => sameIp(e.ip, ip) && asked(e))]) byId.set(l.licenseid, l);
    return [...byId.values()].sort(byRank).map(holdingOf);
  }

  return {
    name: "manage2",
    label: LABEL,
    capabilities: MANAGE2_CAPABILITIES,
    partsOf: (product) => [{ sku: sku(product), type: (product.type ?? "cpanel") as ProductType }],
    companionsOf: () => [],
    registeredVariant: () => undefined,
    variantOf: () => undefined,

    buy: (ip, product, _months, o) => buyOne(ip, sku(product), product, o),
    buyPart: (ip, part, _months, o) => buyOne(ip, part.sku, undefined, o),

    async findPurchase(ip, product, o) {
      const packageid = Number(sku(product));
      if (o?.intent) {
        const { ours } = await licences.findByIntent({ ip, packageid, intent: o.intent });
        return ours ? [holdingOf(ours)] : undefined;
      }
      const active = (await at(ip, packageid)).filter((l) => l.status === "active");
      return active.length ? active.map(holdingOf) : undefined;
    },

    holdingsAt,
    list: async () => (await licences.list()).map(holdingOf),

    renew: () => Promise.reject(new JobFailedError(`${LABEL} bills a licence each month it is active: there is nothing to renew`)),

    async suspend(held) {
      const l = await licenceOf(held);
      if (!l) return notHeld(held);
      if (!stillBillable(l)) return { done: true };
      await licences.suspend(l.licenseid);
      return { done: true };
    },

    async terminate(held) {
      const l = await licenceOf(held);
      if (!l) return notHeld(held);
      if (!stillBillable(l)) return { done: true };
      await licences.terminate(l.licenseid);
      return { done: true };
    },

    async unsuspend(held, o) {
      const l = await licenceOf(held);
      if (!l) return notHeld(held);
      if (l.status === "suspended") {
        throw new JobBlockedError(
          `${LABEL} has licence ${l.licenseid} (${l.ip}) suspended by cPanel, which no API call undoes; ask cPanel to lift it, then retry this job`,
          "upstream_refused",
        );
      }
      if (l.status === "expired") {
        await o?.beforeSend?.();
        await licences.unsuspend(l.licenseid);
      }
      // Moved or changed while it was expired (neither can be done to an expired licence): now.
      // The licence is active (and billed) from here on, so a failure is the unsuspension left
      // unfinished, never one that did nothing.
      try {
        if (!sameIp(l.ip, held.ip)) await licences.changeIp({ ip: l.ip, newip: held.ip, packageid: l.packageid });
        if (String(l.packageid) !== held.sku) await packageUpdate(held.ip, l.packageid, Number(held.sku));
      } catch (err) {
        if (err instanceof Error) return { done: true, unfinished: err };
        throw err;
      }
      return { done: true };
    },

    async changeIp(held, newIp) {
      await licences.changeIp({ ip: held.ip, newip: newIp, packageid: Number(held.sku) });
    },
    changeVariant: () => Promise.reject(new JobFailedError(`${LABEL} has no variants to change`)),
    changesProductInPlace: (from, to) => from !== to,
    changeProduct: (held, to: Part) => packageUpdate(held.ip, Number(held.sku), Number(to.sku)),

    installCommand: async (held, product) => installCommandOf(options.catalog(), "manage2", held.ip, { sku: held.sku, ...(product?.product_id ? { product_id: product.product_id } : {}) }, manage2DefaultInstall(product?.type ?? "cpanel")),

    stopCalls: () => undefined,
  };

  /** XMLpackageUpdate; a refusal (an answer, not a lost one) blocks the job with Manage2's reason. */
  async function packageUpdate(ip: string, from: number, to: number): Promise<void> {
    try {
      await licences.changeProduct({ ip, from, to });
    } catch (err) {
      if (!refusedByAnswer(err)) throw err;
      const reason = (err as ResellerError).upstreamMessage ?? (err as Error).message;
      throw new JobBlockedError(
        `${LABEL} refused to change the licence on ${ip} from package ${from} to ${to}: "${reason}". Nothing was bought or changed; ` +
          `change it in Manage2 (expire it and add the new package) and record it, or retry this job once Manage2 allows it`,
        "upstream_refused",
      );
    }
  }
}

/**
 * Whether ending the licence is still to be done: an active one, and one cPanel suspended, which
 * is billed again the day cPanel lifts its suspension unless it is expired first. An expired one
 * is ended already.
 */
function stillBillable(l: Manage2License): boolean {
  return l.status === "active" || l.status === "suspended";
}

const STATUS_RANK: Readonly<Record<Manage2License["status"], number>> = { active: 0, expired: 1, suspended: 2 };

/** Active first, then expired, then suspended by cPanel; newest first within each. */
function byRank(a: Manage2License, b: Manage2License): number {
  return STATUS_RANK[a.status] - STATUS_RANK[b.status] || b.licenseid - a.licenseid;
}

/**
 * Manage2 answered and said no (`status` 0 at HTTP 200: not a lost or unreadable answer, not
 * bad credentials, not the balance), so nothing was done.
 */
function refusedByAnswer(err: unknown): boolean {
  if (!(err instanceof ResellerError) || err.status !== 200 || err.mayHaveTakenEffect) return false;
  return err.kind === "already_exists" || err.kind === "forbidden" || err.kind === "validation" || err.kind === "unexpected" || err.kind === "not_found";
}
