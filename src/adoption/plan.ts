import type { Catalog, CatalogProduct } from "../catalog/catalog.js";
import { upstreamStatus } from "../reconcile/listed.js";
import { match, unaccounted, type Slot } from "../reconcile/match.js";
import type { ListedLicense } from "../reseller/answers.js";
import { companionsOf } from "../reseller/upstream.js";
import { isoToMs } from "../lifecycle/record.js";
import { typesOf } from "../intake/rules.js";
import type { NewHistory, ServiceBrief } from "../store/store.js";
import { canonicalIp, unusableIpReason } from "../vocabulary/ip-address.js";
import { DEFAULT_PROVIDER } from "../vocabulary/provider-names.js";
import { LITESPEED_VARIANTS, type ProductType } from "../vocabulary/products.js";
import { money, type PriceList } from "../catalog/prices.js";
import type { AdoptionRow } from "./rows.js";
import type { AdoptedService } from "../store/store.js";

/**
 * The adoption plan: each row of a panel's export against the reseller's licence list (read
 * once) and the bridge's own services, decided without a single further upstream call, so a
 * book of 100,000 services is planned in one pass of maps keyed by IP and type.
 *
 * - adopt: every licence the row's product needs is at the row's IP upstream, as the product
 *   wants it (type and LiteSpeed variant), active or suspended, and no service holds it; a row
 *   the panel has suspended is adopted suspended, its licences active upstream suspended there;
 * - buy: none of them is there, and the panel does not have the service suspended (cost: the
 *   price list's, for the row's cycle);
 * - conflict: anything a person must decide (the reason says what), among them a row on a
 *   licence an earlier row of the import takes: apply takes the first, so the plan says so too;
 * - managed: the bridge has the service already.
 */

export const ADOPTION_ACTIONS = ["adopt", "buy", "conflict", "managed"] as const;
export type AdoptionAction = (typeof ADOPTION_ACTIONS)[number];

export interface PlanItem {
  service_identifier: string;
  action: AdoptionAction;
  reason: string;
  /** adopt: 0 (nothing bought); buy: the cycle's price, or null when no price is known; otherwise null. */
  cost: number | null;
}

export interface Orphan {
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
  /** adopt: the service as the reseller holds it. */
  adopted?: AdoptedService;
  /** adopt: its history entry. */
  history?: NewHistory;
  /** adopt: the licence types it takes at its IP, for the check made again when it is written. */
  types?: string[];
  /** adopt, for a row the panel has suspended: its licences the reseller has active, to be suspended there. */
  suspendUpstream?: { ip: string; type: ProductType }[];
}

export interface PlanInput {
  rows: readonly AdoptionRow[];
  /** Every service the bridge has, any status. */
  services: readonly ServiceBrief[];
  /** The reseller's licence list, whole. */
  licenses: readonly ListedLicense[];
  catalog: Catalog;
  prices: PriceList;
  allowPrivateIps: boolean;
}

const key = (ip: string, type: string) => `${canonicalIp(ip) ?? ip}|${type}`;
const isSuspended = (l: ListedLicense) => upstreamStatus(l) === "suspended";
const isActive = (l: ListedLicense) => l.status === undefined || /^(active|ok|enabled)$/i.test(l.status.trim());
/** As lifecycle/acquire.ts reads it: a list that shows no variant holds the plain one. */
const heldVariant = (l: ListedLicense): string => ((LITESPEED_VARIANTS as readonly string[]).includes(l.variant ?? "") ? l.variant! : "litespeed");
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
    // The reseller's until the catalogue names providers (issue 36).
    provider: DEFAULT_PROVIDER,
    sku: null,
    upstream_id: null,
  };
}

export async function planAdoption(input: PlanInput): Promise<{ planned: PlannedRow[]; orphans: Orphan[] }> {
  const { catalog, prices } = input;
  const known = new Map(input.services.map((s) => [s.service_id, s]));
  // One licence, one service: who of the bridge holds (IP, type) now, whatever the reseller's list says.
  const holders = new Map<string, string>();
  for (const s of input.services) {
    if (s.status === "terminated") continue;
    for (const t of typesOf(s)) holders.set(key(s.ip, t), s.service_id);
  }

  const planned: PlannedRow[] = [];
  const candidates: { row: AdoptionRow; product: CatalogProduct; at: number }[] = [];
  // The row of this import that takes (IP, type), the first in the file: apply would write or order it first and refuse the next.
  const takenByRow = new Map<string, string>();
  const decide = (row: AdoptionRow, action: AdoptionAction, reason: string, cost: number | null = null) => {
    const p: PlannedRow = { item: { service_identifier: row.service_identifier, action, reason, cost }, row };
    planned.push(p);
    return p;
  };
  for (const row of input.rows) {
    const existing = known.get(row.service_identifier);
    if (existing) {
      decide(row, "managed", `the bridge manages service ${row.service_identifier} already (${existing.status}); nothing to do`);
      continue;
    }
    if (row.status === "terminated") {
      decide(row, "conflict", "terminated or cancelled in the panel: not adopted; a licence the reseller still holds at its IP is listed among the orphans");
      continue;
    }
    const product = catalog.product(row.package_identifier);
    if (!product) {
      decide(row, "conflict", `unknown product "${row.package_identifier}" (not in the product catalogue): add it to PRODUCTS_FILE, or correct the row`);
      continue;
    }
    const unusable = unusableIpReason(row.ip, input.allowPrivateIps);
    if (unusable) {
      decide(row, "conflict", `IP ${row.ip} cannot hold a licence: ${unusable}`);
      continue;
    }
    const held = typesOf(product)
      .map((t) => [t, holders.get(key(row.ip, t))] as const)
      .find(([, by]) => by !== undefined);
    if (held) {
      decide(row, "conflict", `service ${held[1]} of the bridge holds the ${held[0]} licence at ${row.ip}; one licence belongs to one service`);
      continue;
    }
    const taken = typesOf(product)
      .map((t) => [t, takenByRow.get(key(row.ip, t))] as const)
      .find(([, by]) => by !== undefined);
    if (taken) {
      decide(row, "conflict", `the row of service ${taken[1]} earlier in this import takes the ${taken[0]} licence at ${row.ip}; one licence belongs to one service: keep one of the two rows`);
      continue;
    }
    for (const t of typesOf(product)) takenByRow.set(key(row.ip, t), row.service_identifier);
    candidates.push({ row, product, at: planned.length });
    decide(row, "conflict", "(decided below)");
  }

  // Reconcile's matching, the bridge's services first: a licence one of them holds is not free to adopt.
  const pseudo = candidates.map((c) => asService(c.row, c.product));
  const book = [...input.services, ...pseudo];
  const { slots, claimed } = await match(book, input.licenses);
  const rowIds = new Set(pseudo.map((s) => s.service_id));
  const slotsOf = new Map<string, Slot[]>();
  for (const slot of slots) {
    if (!rowIds.has(slot.svc.service_id)) continue;
    const mine = slotsOf.get(slot.svc.service_id);
    if (mine) mine.push(slot);
    else slotsOf.set(slot.svc.service_id, [slot]);
  }
  const unclaimedAt = new Map<string, ListedLicense[]>();
  for (const l of input.licenses) {
    if (l.free || claimed.has(l)) continue;
    const ip = canonicalIp(l.ip) ?? l.ip;
    const here = unclaimedAt.get(ip);
    if (here) here.push(l);
    else unclaimedAt.set(ip, [l]);
  }

  for (const { row, product, at } of candidates) {
    const p = planned[at]!;
    const set = (action: AdoptionAction, reason: string, cost: number | null = null) => (p.item = { service_identifier: row.service_identifier, action, reason, cost });
    const mine = slotsOf.get(row.service_identifier) ?? [];
    const found = mine.filter((s) => s.license);
    const heldBy = mine.find((s) => !s.license && s.heldBy);
    if (heldBy) {
      const who = rowIds.has(heldBy.heldBy!) ? `the row of service ${heldBy.heldBy} in this import` : `service ${heldBy.heldBy} of the bridge`;
      set("conflict", `the reseller's ${heldBy.type} licence at ${row.ip} is claimed by ${who}; one licence belongs to one service`);
      continue;
    }
    if (found.length === 0) {
      const other = unclaimedAt.get(row.ip);
      if (other?.length) {
        set("conflict", `the reseller holds ${[...new Set(other.map((l) => l.type))].join(" and ")} at ${row.ip}, not ${typesOf(product).join(" and ")}: check the row's product before buying`);
        continue;
      }
      if (row.status === "suspended") {
        set(
          "conflict",
          `suspended in the panel, and the reseller holds no ${typesOf(product).join(" or ")} licence at ${row.ip}: a suspended service is not bought; ` +
            "import the row again once the panel has it active (then it is bought), or terminate it in the panel",
        );
        continue;
      }
      const monthly = prices.product(product.productId);
      const months = catalog.months(row.billing_cycle);
      const cost = monthly === null ? null : money(monthly * months);
      const priced = cost === null ? ` (no price known: set price_per_month for product ${product.productId} in the catalogue)` : "";
      set("buy", `the reseller holds no ${typesOf(product).join(" or ")} licence at ${row.ip}: to be bought for ${months} month(s)${priced}`, cost);
      continue;
    }
    if (found.length < mine.length) {
      const missing = mine.filter((s) => !s.license).map((s) => s.type);
      set("conflict", `the reseller holds ${found.map((s) => s.type).join(" and ")} at ${row.ip} but not ${missing.join(" and ")}: adopting would record a bundle the reseller does not hold whole`);
      continue;
    }
    const refusal = found.map((s) => refusalOf(s, product)).find((r) => r !== undefined);
    if (refusal) {
      set("conflict", refusal);
      continue;
    }
    const licenses = found.map((s) => s.license!);
    const suspended = licenses.some(isSuspended);
    // The panel's suspension holds here as upstream: the service is suspended, and so is each licence still active there.
    const toSuspend = row.status === "suspended" ? found.filter((s) => !isSuspended(s.license!)).map((s) => ({ ip: s.license!.ip, type: s.type as ProductType })) : [];
    const expiries = licenses.map((l) => isoToMs(l.expires_at)).filter((t): t is number => t !== undefined);
    const expiresAt = expiries.length ? Math.min(...expiries) : null;
    const bundleKeys = new Set(licenses.map((l) => l.bundle_key ?? null));
    const variant = licenses.find((l) => l.type === "litespeed");
    const status = suspended || row.status === "suspended" ? "suspended" : "active";
    const upstream = suspended ? (toSuspend.length ? "partly suspended" : "suspended") : "active";
    const differs = toSuspend.length
      ? `; the panel has it suspended: adopted suspended, and ${toSuspend.map((x) => x.type).join(" and ")} to be suspended at the reseller by a job in the service's queue`
      : row.status !== "suspended" && suspended
        ? "; the panel has it active: send service.unsuspended to reactivate it"
        : "";
    const reason = `the reseller holds ${licenses.map((l) => `${l.type}${l.type === "litespeed" ? ` (${heldVariant(l)})` : ""}`).join(" and ")} at ${row.ip}, ${upstream}, ${dateOf(expiresAt)}; nothing to buy${differs}`;
    set("adopt", reason, 0);
    p.types = typesOf(product);
    if (toSuspend.length) p.suspendUpstream = toSuspend;
    p.history = { action: "adopted from import", detail: reason };
    p.adopted = {
      service_id: row.service_identifier,
      product_id: product.productId,
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
      // What the customer paid up to, as the panel says; without it, the reseller's term.
      paid_until: row.next_due_date ? Date.parse(row.next_due_date) : expiresAt,
      companions: JSON.stringify(companionsOf(product.kind === "licence" ? product.type : null, product.kind === "bundle" ? product.bundle : null)),
      order_event_id: null,
    };
  }

  const orphans = (await unaccounted(book, slots, input.licenses, claimed)).map((l) => ({
    ip: l.ip,
    type: l.type,
    monthly_cost: prices.licenseType(l.type),
  }));
  return { planned, orphans };
}

/** Why a licence found at the row's IP is not adopted as it is, or undefined. */
function refusalOf(slot: Slot, product: CatalogProduct): string | undefined {
  const l = slot.license!;
  if (!isActive(l) && !isSuspended(l)) return `the reseller holds the ${l.type} licence at ${l.ip} with status "${l.status}": make it active at the reseller, or remove it so that it is bought`;
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
