import { licenseTypes } from "../lifecycle/service-changes.js";
import type { ListedLicense } from "../reseller/answers.js";
import type { ServiceBrief } from "../store/store.js";
import { CPANEL_COMPANIONS } from "../vocabulary/products.js";
import { canonicalIp } from "./listed.js";
import { inTurns } from "./turns.js";

/**
 * Pairing the bridge's services with the reseller's licence list: which licence each service
 * stands for, and which licences no service accounts for. Reconcile compares the pairs; the
 * adoption plan pairs an import's rows the same way.
 */

/** One upstream licence a service stands for (a bundle stands for several). */
export interface Slot {
  svc: ServiceBrief;
  type: string;
  license?: ListedLicense;
  /** How the licence was found: at the service's IP, by its bundle key, or as the only candidate. */
  how?: "ip" | "bundle_key" | "unique";
  /** Another service holds the licence at this IP and type. */
  heldBy?: string;
}

/** The licences the bridge's services hold, each with the id of the service that holds it. */
export type Claimed = ReadonlyMap<ListedLicense, string>;

/** A service whose licences the reseller should hold: active or suspended. */
export const isLive = (svc: ServiceBrief): boolean => svc.status === "active" || svc.status === "suspended";

/** Live services come first, so a terminated service never takes the licence an active one at the same IP uses. */
const PRIORITY: Record<ServiceBrief["status"], number> = { active: 0, suspended: 0, pending: 1, terminated: 2, failed: 3 };

const COMPANION_TYPES: readonly string[] = CPANEL_COMPANIONS;

const slotKey = (ip: string, type: string) => `${canonicalIp(ip)}|${type}`;

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

function slotsOf(svc: ServiceBrief, byBundleKey: Map<string, ListedLicense[]>): Slot[] {
  let types: string[] = licenseTypes(svc).filter(Boolean);
  if (svc.kind === "bundle" && types.length === 0 && svc.bundle_key) {
    // A bundle id we cannot read components from: its components are what carries its key.
    types = [...new Set((byBundleKey.get(svc.bundle_key) ?? []).filter((l) => !l.free).map((l) => l.type))];
  }
  return types.map((type) => ({ svc, type }));
}

/**
 * Pairs the bridge's services with upstream licences; whatever upstream licence is left is
 * unclaimed. Live services first, then pending ones (adoption passes the rows of an import as
 * pending services: they take a licence at their own IP only), then terminated and failed ones.
 * A service's slots are listed together. A book of 100,000 services is paired in turns of the
 * event loop (TURN items each, every pass).
 */
export async function match(services: readonly ServiceBrief[], licenses: readonly ListedLicense[]): Promise<{ slots: Slot[]; claimed: Claimed }> {
  const byKey = new Map<string, ListedLicense[]>();
  const byBundleKey = new Map<string, ListedLicense[]>();
  await inTurns(licenses, (l) => {
    addTo(byKey, slotKey(l.ip, l.type), l);
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
  const claimed = new Map<ListedLicense, string>();
  const claim = (slot: Slot, l: ListedLicense, how: Slot["how"]) => {
    slot.license = l;
    slot.how = how;
    claimed.set(l, slot.svc.service_id);
  };

  // 1. At the service's IP. A paid licence before a free one of the same type.
  const paidFirst = (a: ListedLicense, b: ListedLicense) => Number(a.free ?? false) - Number(b.free ?? false);
  await inTurns(slots, (slot) => {
    const at = byKey.get(slotKey(slot.svc.ip, slot.type)) ?? [];
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

  // 3. Moved, found as the only licence of its type at an IP no service holds, for the only service missing one.
  const missing = new Map<string, Slot[]>();
  await inTurns(slots, (slot) => {
    if (slot.license || slot.heldBy || !isLive(slot.svc)) return;
    addTo(missing, slot.type, slot);
  });
  if (missing.size === 0) return { slots, claimed };
  const serviceIps = new Set<string>();
  await inTurns(services, (s) => serviceIps.add(canonicalIp(s.ip)));
  for (const [type, waiting] of missing) {
    if (waiting.length !== 1) continue;
    const orphans: ListedLicense[] = [];
    await inTurns(licenses, (l) => {
      if (l.type === type && !l.free && !claimed.has(l) && !serviceIps.has(canonicalIp(l.ip)) && !(l.bundle_key && bundleKeys.has(l.bundle_key))) orphans.push(l);
    });
    if (orphans.length === 1) claim(waiting[0]!, orphans[0]!, "unique");
  }
  return { slots, claimed };
}

/**
 * Upstream licences no service accounts for; free companions and known bundles' components are
 * accounted for. In turns of the event loop, as match() is.
 */
export async function unaccounted(services: readonly ServiceBrief[], slots: readonly Slot[], licenses: readonly ListedLicense[], claimed: Claimed): Promise<ListedLicense[]> {
  const cpanelIps = new Set<string>();
  await inTurns(slots, (s) => {
    if (s.type !== "cpanel") return;
    cpanelIps.add(canonicalIp(s.svc.ip));
    if (s.license) cpanelIps.add(canonicalIp(s.license.ip));
  });
  const bundleKeys = await bundleKeysOf(services);
  const out: ListedLicense[] = [];
  await inTurns(licenses, (l) => {
    if (claimed.has(l) || l.free) return;
    if (COMPANION_TYPES.includes(l.type) && cpanelIps.has(canonicalIp(l.ip))) return;
    if (l.bundle_key && bundleKeys.has(l.bundle_key)) return;
    out.push(l);
  });
  return out;
}
