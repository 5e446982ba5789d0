import { licenseTypes } from "../lifecycle/service-changes.js";
import type { ServiceBrief } from "../store/store.js";
import { DEFAULT_PROVIDER, type ProviderName } from "../vocabulary/provider-names.js";
import { CPANEL_COMPANIONS } from "../vocabulary/products.js";
import { canonicalIp } from "./listed.js";
import { providerOfListed, skuOfListed, type Listed } from "./lists.js";
import { inTurns } from "./turns.js";

/**
 * Pairing the bridge's services with the providers' licence lists: which licence each service
 * stands for, and which licences no service accounts for. A licence is one of its provider, at
 * an IP, of what that provider sells (provider, IP, SKU): a service is paired only with its own
 * provider's licences. Reconcile compares the pairs; the adoption plan pairs an import's rows
 * the same way.
 */

/** One upstream licence a service stands for (a bundle stands for several). */
export interface Slot {
  svc: ServiceBrief;
  /** The licence type people see (a bundle's component). */
  type: string;
  /** What the service's provider sells as it, where that is not `type` (Manage2's package, CLN's type number). */
  sku?: string;
  license?: Listed;
  /**
   * How the licence was found: at the service's IP, by the provider's licence id the service
   * records (at another IP), by its bundle key, or as the only candidate.
   */
  how?: "ip" | "upstream_id" | "bundle_key" | "unique";
  /** Another service holds the licence at this IP and type. */
  heldBy?: string;
}

/** The licences the bridge's services hold, each with the id of the service that holds it. */
export type Claimed = ReadonlyMap<Listed, string>;

/** Whose licences a service's are. */
export const providerOfService = (svc: Pick<ServiceBrief, "provider">): ProviderName => svc.provider ?? DEFAULT_PROVIDER;
/** What a slot's provider sells as its licence. */
export const skuOfSlot = (slot: Slot): string => slot.sku ?? slot.type;

/** A service whose licences the reseller should hold: active or suspended. */
export const isLive = (svc: ServiceBrief): boolean => svc.status === "active" || svc.status === "suspended";

/** Live services come first, so a terminated service never takes the licence an active one at the same IP uses. */
const PRIORITY: Record<ServiceBrief["status"], number> = { active: 0, suspended: 0, pending: 1, terminated: 2, failed: 3 };

const COMPANION_TYPES: readonly string[] = CPANEL_COMPANIONS;

const slotKey = (provider: string, ip: string, sku: string) => `${provider}|${canonicalIp(ip)}|${sku}`;
const keyOfListed = (l: Listed) => slotKey(providerOfListed(l), l.ip, skuOfListed(l));
const keyOfSlot = (slot: Slot) => slotKey(providerOfService(slot.svc), slot.svc.ip, skuOfSlot(slot));

/** Adds `value` to the list under `key`. */
function addTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * The bundle keys of a book's services, kept with the book: match collects them in its pass over
 * the services, and unaccounted, given the same book (reconcile and the adoption plan both give
 * it), reads them rather than pass over 100,000 services again.
 */
const bundleKeysOfBook = new WeakMap<readonly ServiceBrief[], ReadonlySet<string>>();

async function bundleKeysOf(services: readonly ServiceBrief[]): Promise<ReadonlySet<string>> {
  const known = bundleKeysOfBook.get(services);
  if (known) return known;
  const keys = new Set<string>();
  await inTurns(services, (s) => {
    if (s.bundle_key) keys.add(s.bundle_key);
  });
  bundleKeysOfBook.set(services, keys);
  return keys;
}

function slotsOf(svc: ServiceBrief, byBundleKey: Map<string, Listed[]>): Slot[] {
  // Another provider's licence is its one SKU (a package, a CLN type), shown as the service's type.
  if (providerOfService(svc) !== DEFAULT_PROVIDER) {
    const sku = svc.sku ?? svc.type;
    return sku ? [{ svc, type: svc.type ?? sku, sku }] : [];
  }
  let types: string[] = licenseTypes(svc).filter(Boolean);
  if (svc.kind === "bundle" && types.length === 0 && svc.bundle_key) {
    // A bundle id we cannot read components from: its components are what carries its key.
    types = [...new Set((byBundleKey.get(svc.bundle_key) ?? []).filter((l) => !l.free).map((l) => l.type))];
  }
  return types.map((type) => ({ svc, type }));
}

/**
 * Pairs the bridge's services with upstream licences; whatever upstream licence is left is
 * unclaimed. A live service that records the provider's id of its licence has that licence first,
 * wherever it is listed. Then by IP and the rest: live services first, then pending ones
 * (adoption passes the rows of an import as pending services: they take a licence at their own
 * IP only), then terminated and failed ones.
 * A service's slots are listed together. A book of 100,000 services is paired in turns of the
 * event loop (TURN items each, every pass).
 */
export async function match(services: readonly ServiceBrief[], licenses: readonly Listed[]): Promise<{ slots: Slot[]; claimed: Claimed }> {
  const byKey = new Map<string, Listed[]>();
  const byBundleKey = new Map<string, Listed[]>();
  await inTurns(licenses, (l) => {
    addTo(byKey, keyOfListed(l), l);
    if (l.bundle_key) addTo(byBundleKey, l.bundle_key, l);
  });
  // The services in PRIORITY's order, each status in the order given (what a stable sort gives).
  const byPriority: ServiceBrief[][] = [[], [], [], []];
  const bundleKeys = new Set<string>();
  await inTurns(services, (svc) => {
    byPriority[PRIORITY[svc.status] ?? 3]!.push(svc);
    if (svc.bundle_key) bundleKeys.add(svc.bundle_key);
  });
  bundleKeysOfBook.set(services, bundleKeys);
  const slots: Slot[] = [];
  await inTurns(byPriority.flat(), (svc) => {
    for (const slot of slotsOf(svc, byBundleKey)) slots.push(slot);
  });
  const claimed = new Map<Listed, string>();
  const claim = (slot: Slot, l: Listed, how: Slot["how"]) => {
    slot.license = l;
    slot.how = how;
    claimed.set(l, slot.svc.service_id);
  };

  // 0. By the provider's own id of the licence, which a live service records (Manage2's
  // licenseid): its licence wherever it is, before any service takes it by its IP. A suspended
  // Manage2 service's licence stays expired at the IP it had while the service's row names the
  // IP it moves to at unsuspension, when that same licence is reactivated by this id and moved.
  const byUpstreamId = new Map<string, Listed>();
  await inTurns(licenses, (l) => {
    if (l.upstream_id !== undefined) byUpstreamId.set(`${providerOfListed(l)}|${l.upstream_id}`, l);
  });
  if (byUpstreamId.size > 0) {
    await inTurns(slots, (slot) => {
      if (!slot.svc.upstream_id || !isLive(slot.svc)) return;
      const l = byUpstreamId.get(`${providerOfService(slot.svc)}|${slot.svc.upstream_id}`);
      if (l && !claimed.has(l)) claim(slot, l, canonicalIp(l.ip) === canonicalIp(slot.svc.ip) ? "ip" : "upstream_id");
    });
  }

  // 1. At the service's IP. A paid licence before a free one of the same type.
  const paidFirst = (a: Listed, b: Listed) => Number(a.free ?? false) - Number(b.free ?? false);
  await inTurns(slots, (slot) => {
    if (slot.license) return;
    const at = byKey.get(keyOfSlot(slot)) ?? [];
    const here = at.length > 1 ? at.slice().sort(paidFirst) : at;
    const free = here.find((l) => !claimed.has(l));
    if (free) claim(slot, free, "ip");
    else if (here[0]) slot.heldBy = claimed.get(here[0]);
  });

  // 2. Moved, found by the bundle key the bridge recorded.
  await inTurns(slots, (slot) => {
    if (slot.license || slot.heldBy || !slot.svc.bundle_key || !(isLive(slot.svc) || slot.svc.status === "terminated")) return;
    const found = (byBundleKey.get(slot.svc.bundle_key) ?? []).find((l) => l.type === slot.type && !l.free && !claimed.has(l));
    if (found) claim(slot, found, "bundle_key");
  });

  // 3. Moved, found as the only licence of its provider and SKU at an IP none of that provider's
  // services holds, for the only service of that provider missing one.
  const missing = new Map<string, Slot[]>();
  await inTurns(slots, (slot) => {
    if (slot.license || slot.heldBy || !isLive(slot.svc)) return;
    addTo(missing, `${providerOfService(slot.svc)}|${skuOfSlot(slot)}`, slot);
  });
  if (missing.size === 0) return { slots, claimed };
  const serviceIps = new Set<string>();
  await inTurns(services, (s) => serviceIps.add(`${providerOfService(s)}|${canonicalIp(s.ip)}`));
  for (const [kind, waiting] of missing) {
    if (waiting.length !== 1) continue;
    const orphans: Listed[] = [];
    await inTurns(licenses, (l) => {
      const provider = providerOfListed(l);
      if (`${provider}|${skuOfListed(l)}` !== kind || l.free || claimed.has(l) || serviceIps.has(`${provider}|${canonicalIp(l.ip)}`)) return;
      if (!(l.bundle_key && bundleKeys.has(l.bundle_key))) orphans.push(l);
    });
    if (orphans.length === 1) claim(waiting[0]!, orphans[0]!, "unique");
  }
  return { slots, claimed };
}

/**
 * Upstream licences no service accounts for; free companions and known bundles' components are
 * accounted for. In turns of the event loop, as match() is.
 */
export async function unaccounted(services: readonly ServiceBrief[], slots: readonly Slot[], licenses: readonly Listed[], claimed: Claimed): Promise<Listed[]> {
  // The reseller's free companions come with its cPanel licences (another provider's cPanel brings none).
  const cpanelIps = new Set<string>();
  await inTurns(slots, (s) => {
    if (s.type !== "cpanel" || providerOfService(s.svc) !== DEFAULT_PROVIDER) return;
    cpanelIps.add(canonicalIp(s.svc.ip));
    if (s.license) cpanelIps.add(canonicalIp(s.license.ip));
  });
  const bundleKeys = await bundleKeysOf(services);
  const out: Listed[] = [];
  await inTurns(licenses, (l) => {
    if (claimed.has(l) || l.free) return;
    if (l.provider === undefined && COMPANION_TYPES.includes(l.type) && cpanelIps.has(canonicalIp(l.ip))) return;
    if (l.bundle_key && bundleKeys.has(l.bundle_key)) return;
    out.push(l);
  });
  return out;
}
