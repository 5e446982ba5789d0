import type { Catalog, CatalogProduct } from "../catalog/catalog.js";
import { upstreamStatus } from "../reconcile/listed.js";
import { providerOfListed, RESELLER_SOURCE, skuOfListed, type ListSource, type Listed } from "../reconcile/lists.js";
import { match, unaccounted, type Slot } from "../reconcile/match.js";
import { companionsOf } from "../reseller/upstream.js";
import { isoToMs } from "../lifecycle/record.js";
import { licencesHeld } from "../intake/rules.js";
import { productOf } from "../providers/catalogue.js";
import type { NewHistory, ServiceBrief } from "../store/store.js";
import { canonicalIp, unusableIpReason } from "../vocabulary/ip-address.js";
import { DEFAULT_PROVIDER, type ProviderName } from "../vocabulary/provider-names.js";
import { PROVIDER_TITLES } from "../vocabulary/providers.js";
import { LITESPEED_VARIANTS, type ProductType } from "../vocabulary/products.js";
import { money, type PriceList } from "../catalog/prices.js";
import type { AdoptionRow } from "./rows.js";
import type { AdoptedService } from "../store/store.js";

/**
 * The adoption plan: each row of a panel's export against its provider's licence list (each
 * configured provider's read once) and the bridge's own services, decided without a single
 * further upstream call, so a book of 100,000 services is planned in one pass of maps keyed by
 * provider, IP and what is bought. A row's provider is its product's (a `provider` column, when
 * given, must say the same).
 *
 * - adopt: every licence the row's product needs is at the row's IP at its provider, as the
 *   product wants it (type and LiteSpeed variant), active or suspended (for Manage2, which
 *   suspends by expiry, expired counts as suspended), and no service holds it; a row the panel
 *   has suspended is adopted suspended, its licences active upstream suspended there;
 * - buy: none of them is there, and the panel does not have the service suspended (cost: the
 *   price list's, for the row's cycle);
 * - conflict: anything a person must decide (the reason says what), among them a row on a
 *   licence an earlier row of the import takes: apply takes the first, so the plan says so too;
 *   and a row on a licence a live service of the bridge records by its licence id, wherever that
 *   service is recorded (a suspended Manage2 service's licence, expired at the IP it moved from);
 * - managed: the bridge has the service already.
 */

export const ADOPTION_ACTIONS = ["adopt", "buy", "conflict", "managed"] as const;
export type AdoptionAction = (typeof ADOPTION_ACTIONS)[number];

export interface PlanItem {
  service_identifier: string;
  /** The row's provider: its product's (or the row's `provider` column, where the product is unknown); null when neither names one. */
  provider: ProviderName | null;
  action: AdoptionAction;
  reason: string;
  /** adopt: 0 (nothing bought); buy: the cycle's price, or null when no price is known; otherwise null. */
  cost: number | null;
}

export interface Orphan {
  provider: ProviderName;
  ip: string;
  type: string;
  monthly_cost: number | null;
}

export interface AdoptionPlan {
  plan: PlanItem[];
  orphans: Orphan[];
}

/** What applying the plan writes or queues, kept beside the item it belongs to. */
export interface PlannedRow {
  item: PlanItem;
  row: AdoptionRow;
  /** adopt: the service as its provider holds it. */
  adopted?: AdoptedService;
  /** adopt: its history entry. */
  history?: NewHistory;
  /** adopt: the licences it takes at its IP (licencesHeld's keys and labels), for the check made again when it is written. */
  held?: { key: string; label: string }[];
  /** adopt, for a row the panel has suspended: its licences the provider has active, to be suspended there (reconcile's repair job's payload). */
  suspendUpstream?: { ip: string; type: ProductType; provider: ProviderName; sku: string; upstream_id?: string }[];
}

export interface PlanInput {
  rows: readonly AdoptionRow[];
  /** Every service the bridge has, any status. */
  services: readonly ServiceBrief[];
  /** Every configured provider's licence list, whole. */
  licenses: readonly Listed[];
  /** How each provider's list was read; a row of a provider not among them is left to a person. (Default: the reseller's alone) */
  sources?: ReadonlyMap<ProviderName, ListSource>;
  catalog: Catalog;
  prices: PriceList;
  allowPrivateIps: boolean;
}

const key = (ip: string, held: string) => `${canonicalIp(ip) ?? ip}|${held}`;
/** Suspended as the bridge would have it: suspended, or for a provider that suspends by expiry (Manage2), expired. */
const isSuspended = (l: Listed, source: ListSource) => upstreamStatus(l) === "suspended" || (source.suspension === "by-expiry" && upstreamStatus(l) === "expired");
const isActive = (l: Listed) => l.status === undefined || /^(active|ok|enabled)$/i.test(l.status.trim());
/** As lifecycle/acquire.ts reads it: a list that shows no variant holds the plain one. */
const heldVariant = (l: Listed): string => ((LITESPEED_VARIANTS as readonly string[]).includes(l.variant ?? "") ? l.variant! : "litespeed");
const dateOf = (ms: number | null) => (ms === null ? "no expiry listed" : `expires ${new Date(ms).toISOString().slice(0, 10)}`);

/** A row as the service it would be, for reconcile's matching: pending, so it takes a licence only at its own IP. */
function asService(row: AdoptionRow, product: CatalogProduct): ServiceBrief {
  return {
    service_id: row.service_identifier,
    kind: product.kind,
    type: product.kind === "licence" ? product.type : null,
    bundle: product.kind === "bundle" ? product.bundle : null,
    bundle_key: null,
    variant: product.kind === "licence" ? product.variant : null,
    upstream_variant: null,
    ip: row.ip,
    status: "pending",
    expires_at: null,
    updated_at: 0,
    provider: product.provider,
    sku: skuOfProduct(product),
    upstream_id: null,
  };
}

/** What a product is bought as at a provider other than the reseller (its package, its CLN type); null for the reseller's, whose type or bundle it is. */
const skuOfProduct = (product: CatalogProduct): string | null => (product.provider === DEFAULT_PROVIDER ? null : product.purchase.sku);

export async function planAdoption(input: PlanInput): Promise<{ planned: PlannedRow[]; orphans: Orphan[] }> {
  const { catalog, prices } = input;
  const sources = input.sources ?? new Map([[DEFAULT_PROVIDER, RESELLER_SOURCE]]);
  const known = new Map(input.services.map((s) => [s.service_id, s]));
  // One licence, one service: who of the bridge holds (IP, provider, what is bought) now, whatever the lists say.
  const holders = new Map<string, string>();
  for (const s of input.services) {
    if (s.status === "terminated") continue;
    for (const l of licencesHeld(s)) holders.set(key(s.ip, l.key), s.service_id);
  }

  const planned: PlannedRow[] = [];
  const candidates: { row: AdoptionRow; product: CatalogProduct; at: number }[] = [];
  // The row of this import that takes (IP, provider, what is bought), the first in the file: apply would write or order it first and refuse the next.
  const takenByRow = new Map<string, string>();
  const decide = (row: AdoptionRow, provider: ProviderName | null, action: AdoptionAction, reason: string, cost: number | null = null) => {
    const p: PlannedRow = { item: { service_identifier: row.service_identifier, provider, action, reason, cost }, row };
    planned.push(p);
    return p;
  };
  for (const row of input.rows) {
    const existing = known.get(row.service_identifier);
    if (existing) {
      decide(row, existing.provider, "managed", `the bridge manages service ${row.service_identifier} already (${existing.status}); nothing to do`);
      continue;
    }
    const product = catalog.product(row.package_identifier);
    const provider = product?.provider ?? row.provider ?? null;
    if (row.status === "terminated") {
      decide(row, provider, "conflict", "terminated or cancelled in the panel: not adopted; a licence its provider still holds at its IP is listed among the orphans");
      continue;
    }
    if (!product) {
      decide(row, provider, "conflict", `unknown product "${row.package_identifier}" (not in the product catalogue): add it to PRODUCTS_FILE, or correct the row`);
      continue;
    }
    if (row.provider !== undefined && row.provider !== product.provider) {
      decide(row, row.provider, "conflict", `the row says provider ${row.provider}, but product ${product.productId} is bought from ${product.provider}: correct the row's provider or its product`);
      continue;
    }
    if (!sources.has(product.provider)) {
      decide(row, provider, "conflict", `${PROVIDER_TITLES[product.provider]}'s licence list was not read (it is not configured): configure it, then import the row again`);
      continue;
    }
    const unusable = unusableIpReason(row.ip, input.allowPrivateIps);
    if (unusable) {
      decide(row, provider, "conflict", `IP ${row.ip} cannot hold a licence: ${unusable}`);
      continue;
    }
    const wanted = licencesHeld(product);
    const held = wanted.map((l) => [l.label, holders.get(key(row.ip, l.key))] as const).find(([, by]) => by !== undefined);
    if (held) {
      decide(row, provider, "conflict", `service ${held[1]} of the bridge holds the ${held[0]} licence at ${row.ip}; one licence belongs to one service`);
      continue;
    }
    const taken = wanted.map((l) => [l.label, takenByRow.get(key(row.ip, l.key))] as const).find(([, by]) => by !== undefined);
    if (taken) {
      decide(row, provider, "conflict", `the row of service ${taken[1]} earlier in this import takes the ${taken[0]} licence at ${row.ip}; one licence belongs to one service: keep one of the two rows`);
      continue;
    }
    for (const l of wanted) takenByRow.set(key(row.ip, l.key), row.service_identifier);
    candidates.push({ row, product, at: planned.length });
    decide(row, provider, "conflict", "(decided below)");
  }

  // Reconcile's matching, the bridge's services first: a licence one of them holds is not free to adopt.
  const pseudo = candidates.map((c) => asService(c.row, c.product));
  const book = [...input.services, ...pseudo];
  const { slots, claimed } = await match(book, input.licenses);
  const rowIds = new Set(pseudo.map((s) => s.service_id));
  const slotsOf = new Map<string, Slot[]>();
  // The licences the bridge's services hold by the licence id they record, at an IP they are not recorded at.
  const heldById = new Map<string, Listed>();
  for (const slot of slots) {
    if (slot.how === "upstream_id" && slot.license) heldById.set(slot.svc.service_id, slot.license);
    if (!rowIds.has(slot.svc.service_id)) continue;
    const mine = slotsOf.get(slot.svc.service_id);
    if (mine) mine.push(slot);
    else slotsOf.set(slot.svc.service_id, [slot]);
  }
  // The licences no service claims, by their provider and IP: what a row finds there instead of its own.
  const unclaimedAt = new Map<string, Listed[]>();
  for (const l of input.licenses) {
    if (l.free || claimed.has(l)) continue;
    const at = key(l.ip, providerOfListed(l));
    const here = unclaimedAt.get(at);
    if (here) here.push(l);
    else unclaimedAt.set(at, [l]);
  }

  for (const { row, product, at } of candidates) {
    const p = planned[at]!;
    const source = sources.get(product.provider)!;
    const who = source.label;
    const types = typesOfProduct(product);
    const set = (action: AdoptionAction, reason: string, cost: number | null = null) =>
      (p.item = { service_identifier: row.service_identifier, provider: product.provider, action, reason, cost });
    const mine = slotsOf.get(row.service_identifier) ?? [];
    const found = mine.filter((s) => s.license);
    const heldBy = mine.find((s) => !s.license && s.heldBy);
    if (heldBy) {
      const byId = heldById.get(heldBy.heldBy!);
      const owner = known.get(heldBy.heldBy!);
      if (byId && owner) {
        // The owner is recorded at another IP: a suspended one moves there with this licence when it is unsuspended.
        const where =
          owner.status === "suspended" && source.suspension !== "native"
            ? `${owner.service_id} is suspended, and the licence moves to ${owner.ip} when it is unsuspended`
            : `${owner.service_id} is ${owner.status} at ${owner.ip}`;
        set("conflict", `${who}'s ${heldBy.type} licence ${byId.upstream_id} at ${row.ip} is claimed by service ${owner.service_id} of the bridge, which records its licence id (${where}); one licence belongs to one service`);
        continue;
      }
      const by = rowIds.has(heldBy.heldBy!) ? `the row of service ${heldBy.heldBy} in this import` : `service ${heldBy.heldBy} of the bridge`;
      set("conflict", `${who}'s ${heldBy.type} licence at ${row.ip} is claimed by ${by}; one licence belongs to one service`);
      continue;
    }
    if (found.length === 0) {
      const other = unclaimedAt.get(key(row.ip, product.provider));
      if (other?.length) {
        set("conflict", `${who} holds ${[...new Set(other.map(shownAs))].join(" and ")} at ${row.ip}, not ${types.join(" and ")}: check the row's product before buying`);
        continue;
      }
      if (row.status === "suspended") {
        set(
          "conflict",
          `suspended in the panel, and ${who} holds no ${types.join(" or ")} licence at ${row.ip}: a suspended service is not bought; ` +
            "import the row again once the panel has it active (then it is bought), or terminate it in the panel",
        );
        continue;
      }
      const monthly = prices.product(product.productId);
      const months = catalog.months(row.billing_cycle);
      const cost = monthly === null ? null : money(monthly * months);
      const priced = cost === null ? ` (no price known: set price_per_month for product ${product.productId} in the catalogue)` : "";
      set("buy", `${who} holds no ${types.join(" or ")} licence at ${row.ip}: to be bought for ${months} month(s)${priced}`, cost);
      continue;
    }
    if (found.length < mine.length) {
      const missing = mine.filter((s) => !s.license).map((s) => s.type);
      set("conflict", `${who} holds ${found.map((s) => s.type).join(" and ")} at ${row.ip} but not ${missing.join(" and ")}: adopting would record a bundle ${who} does not hold whole`);
      continue;
    }
    const refusal = found.map((s) => refusalOf(s, product, source)).find((r) => r !== undefined);
    if (refusal) {
      set("conflict", refusal);
      continue;
    }
    const licenses = found.map((s) => s.license!);
    const suspended = licenses.some((l) => isSuspended(l, source));
    // The panel's suspension holds here as upstream: the service is suspended, and so is each licence still active there.
    const toSuspend =
      row.status === "suspended"
        ? found
            .filter((s) => !isSuspended(s.license!, source))
            .map((s) => ({ ip: s.license!.ip, type: s.type as ProductType, provider: product.provider, sku: skuOfListed(s.license!), ...(s.license!.upstream_id ? { upstream_id: s.license!.upstream_id } : {}) }))
        : [];
    const expiries = licenses.map((l) => isoToMs(l.expires_at)).filter((t): t is number => t !== undefined);
    const paidUntil = row.next_due_date ? Date.parse(row.next_due_date) : null;
    // A provider that bills while active lists no term: the bridge's term is what the panel says the customer paid.
    const expiresAt = expiries.length ? Math.min(...expiries) : source.renewal === "billed-while-active" ? paidUntil : null;
    const bundleKeys = new Set(licenses.map((l) => l.bundle_key ?? null));
    const variant = licenses.find((l) => l.type === "litespeed");
    const upstreamIds = [...new Set(licenses.map((l) => l.upstream_id).filter((id) => id !== undefined))];
    const status = suspended || row.status === "suspended" ? "suspended" : "active";
    const upstream = suspended ? (toSuspend.length ? "partly suspended" : "suspended") : "active";
    const differs = toSuspend.length
      ? `; the panel has it suspended: adopted suspended, and ${toSuspend.map((x) => x.type).join(" and ")} to be suspended at ${who} by a job in the service's queue`
      : row.status !== "suspended" && suspended
        ? "; the panel has it active: send service.unsuspended to reactivate it"
        : "";
    const reason = `${who} holds ${licenses.map((l) => `${l.type}${l.type === "litespeed" ? ` (${heldVariant(l)})` : ""}`).join(" and ")} at ${row.ip}, ${upstream}, ${dateOf(expiries.length ? expiresAt : null)}; nothing to buy${differs}`;
    set("adopt", reason, 0);
    p.held = licencesHeld(product);
    if (toSuspend.length) p.suspendUpstream = toSuspend;
    p.history = { action: "adopted from import", detail: reason };
    p.adopted = {
      service_id: row.service_identifier,
      product_id: product.productId,
      provider: product.provider,
      sku: skuOfProduct(product),
      upstream_id: upstreamIds.length === 1 ? upstreamIds[0]! : null,
      kind: product.kind,
      type: product.kind === "licence" ? product.type : null,
      bundle: product.kind === "bundle" ? product.bundle : null,
      variant: product.kind === "licence" ? product.variant : null,
      upstream_variant: variant ? heldVariant(variant) : null,
      bundle_key: product.kind === "bundle" && bundleKeys.size === 1 ? ([...bundleKeys][0] ?? null) : null,
      ip: row.ip,
      billing_cycle: row.billing_cycle,
      months: catalog.months(row.billing_cycle),
      status,
      customer_email: row.customer_email ?? null,
      customer_name: row.customer_name ?? null,
      expires_at: expiresAt,
      // What the customer paid up to, as the panel says; without it, the provider's term.
      paid_until: paidUntil ?? expiresAt,
      // Free companions are the reseller's (a Manage2 cPanel brings none).
      companions: JSON.stringify(product.provider === DEFAULT_PROVIDER ? companionsOf(product.kind === "licence" ? product.type : null, product.kind === "bundle" ? product.bundle : null) : []),
      order_event_id: null,
    };
  }

  const orphans = (await unaccounted(book, slots, input.licenses, claimed)).map((l) => ({
    provider: providerOfListed(l),
    ip: l.ip,
    type: l.type,
    monthly_cost: orphanPrice(l, catalog, prices),
  }));
  return { planned, orphans };
}

/** The licence types a product's licences are shown as (a bundle's components). */
function typesOfProduct(product: CatalogProduct): string[] {
  return licencesHeld(product).map((l) => (product.provider === DEFAULT_PROVIDER ? l.label : product.kind === "licence" ? product.type : l.label));
}

/** How a licence a row did not expect is named in its reason: its type, and for another provider what it sells there. */
const shownAs = (l: Listed): string => (l.provider === undefined ? l.type : `${l.type} (${l.provider === "manage2" ? "package" : "type"} ${skuOfListed(l)})`);

/**
 * A month of an orphan: the reseller's by its type (the price list's), another provider's by the
 * catalogue product that sells the same there (its price_per_month).
 */
function orphanPrice(l: Listed, catalog: Catalog, prices: PriceList): number | null {
  if (l.provider === undefined) return prices.licenseType(l.type);
  const product = productOf(catalog, l.provider, { sku: skuOfListed(l) });
  return product ? prices.product(product.productId) : null;
}

/** Why a licence found at the row's IP is not adopted as it is, or undefined. */
function refusalOf(slot: Slot, product: CatalogProduct, source: ListSource): string | undefined {
  const l = slot.license!;
  const who = source.label;
  if (!isActive(l) && !isSuspended(l, source)) return `${who} holds the ${l.type} licence at ${l.ip} with status "${l.status}": make it active at ${who}, or remove it so that it is bought`;
  if (l.type === "litespeed" && product.kind === "licence") {
    const wanted = product.variant ?? "litespeed";
    const held = heldVariant(l);
    if (held !== wanted) {
      const shown = l.variant ? held : "no variant (taken as litespeed)";
      return `the reseller holds the litespeed licence at ${l.ip} as ${shown}, product ${product.productId} is ${wanted}: change its core at the reseller, or import it under the matching product`;
    }
  }
  return undefined;
}

export function asPlan(planned: readonly PlannedRow[], orphans: Orphan[]): AdoptionPlan {
  return { plan: planned.map((p) => p.item), orphans };
}
