import { jobOf } from "../jobs/define.js";
import { JobWaiter } from "../jobs/waiter.js";
import { JOB_KINDS, serviceQueueKey } from "../vocabulary/job-kinds.js";
import { isoToMs } from "../lifecycle/record.js";
import { licenseTypes } from "../lifecycle/service-changes.js";
import type { ListedLicense } from "../reseller/answers.js";
import { canonicalIp as canonical } from "../vocabulary/ip-address.js";
import type { Upstream } from "../reseller/upstream.js";
import { CPANEL_COMPANIONS, type ProductType } from "../vocabulary/products.js";
import { yieldToEventLoop, type AuditDraft, type NewHistory, type ServiceBrief, type ServicePatch, type Store } from "../store/store.js";
import { readServiceBriefs } from "./service-briefs.js";
import { ENFORCE_SUSPENSION } from "../intake/jobs.js";

const canonicalIp = (ip: string): string => canonical(ip) ?? ip;

/**
 * Reconcile: the bridge's licences (services table) against the reseller's `/license/list`.
 * It reads both, reports every difference as a drift item and, when asked, repairs what needs
 * no purchase. It never registers or renews: anything that costs money is left for a person.
 */

export const DRIFT_KINDS = ["missing_upstream", "unknown_locally", "status_differs", "ip_differs", "variant_differs"] as const;
export type DriftKind = (typeof DRIFT_KINDS)[number];

export interface DriftItem {
  kind: DriftKind;
  /** The bridge's service, or null for a licence no service accounts for. */
  service_id: string | null;
  /** The IP the bridge has for the service (or the upstream licence's IP for unknown_locally). */
  ip: string;
  type: string;
  /** What the bridge expects: a status, an IP, a variant, or "absent". */
  expected: string;
  /** What the reseller has: a status, an IP, a variant, or "absent". */
  actual: string;
  /** Whether `reconcile --fix` repairs it (nothing is bought either way). */
  fixable: boolean;
  /** What the fix does (fixable items) or what a person should do (the rest). */
  fix?: string;
}

/** A drift item after `fix`: `fix` says what was done, or what is left to do and, if a repair failed, why. */
export interface HandledItem extends DriftItem {
  error?: string;
}

export interface ReconcileResult {
  /** Every difference found, before any repair. */
  drift: DriftItem[];
  /** Repaired by this run (empty without `fix`). */
  fixed: HandledItem[];
  /** Needs a person: a purchase, a licence no service accounts for, or a repair that failed. */
  manual: HandledItem[];
}

export interface ReconcileProgress {
  phase: "compare" | "fix";
  done: number;
  total: number;
}

export interface ReconcileOptions {
  /** Repair what needs no purchase. (Default: false) */
  fix?: boolean;
  /** Called as services are compared and repaired, e.g. to drive a progress bar. */
  onProgress?: (progress: ReconcileProgress) => void;
  /**
   * How long to wait for the queued upstream suspensions to be carried out by the service's job
   * runner before reporting them as still queued. (Default: 15000 ms)
   */
  waitMs?: number;
  /**
   * The operator who asked for the repairs: each service's repair writes an entry (their
   * action, what was repaired) in the transaction of the repair, or `refused` when the
   * service changed meanwhile.
   */
  audit?: AuditDraft;
}

export interface ReconcileDeps {
  /** Upstream suspensions are queued here, in each service's own order, for the service's runner. */
  store: Store;
  upstream: Upstream;
}

/** Job kinds that change a service's status, IP or variant: while one is unfinished, reconcile only reports. */
const MOVING_KINDS = [
  JOB_KINDS.register,
  JOB_KINDS.suspend,
  JOB_KINDS.unsuspend,
  JOB_KINDS.terminate,
  JOB_KINDS.changeIp,
  JOB_KINDS.changeProduct,
  JOB_KINDS.enforceSuspension,
] as const;

const COMPANION_TYPES: readonly string[] = CPANEL_COMPANIONS;

/** Services compared, and items of each pairing pass, between two turns of the event loop. */
const COMPARE_TURN = 2000;
const MATCH_TURN = 2000;

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

/** A repair to make, kept with the drift item it answers. */
interface Repair {
  item: DriftItem;
  slot: Slot;
  action: "suspend_upstream" | "record_suspended" | "record_ip" | "record_variant";
}

const slotKey = (ip: string, type: string) => `${canonicalIp(ip)}|${type}`;

/** The upstream status as the bridge names it; undefined when the list does not say. */
export function upstreamStatus(l: ListedLicense): string | undefined {
  const s = l.status?.trim().toLowerCase();
  if (!s) return undefined;
  if (s.includes("suspend")) return "suspended";
  return s;
}

/** Live services come first, so a terminated service never takes the licence an active one at the same IP uses. */
const PRIORITY: Record<ServiceBrief["status"], number> = { active: 0, suspended: 0, pending: 1, terminated: 2, failed: 3 };
const isLive = (svc: ServiceBrief) => svc.status === "active" || svc.status === "suspended";

/** Adds `value` to the list under `key`. */
function addTo<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function slotsOf(svc: ServiceBrief, byBundleKey: Map<string, ListedLicense[]>): Slot[] {
  let types: string[] = licenseTypes(svc).filter(Boolean);
  if (svc.kind === "bundle" && types.length === 0 && svc.bundle_key) {
    // A bundle id we cannot read components from: its components are what carries its key.
    types = [...new Set((byBundleKey.get(svc.bundle_key) ?? []).filter((l) => !l.free).map((l) => l.type))];
  }
  return types.map((type) => ({ svc, type }));
}

/** The licences the bridge's services hold, each with the id of the service that holds it. */
export type Claimed = ReadonlyMap<ListedLicense, string>;

/**
 * Pairs the bridge's services with upstream licences; whatever upstream licence is left is
 * unclaimed. Live services first, then pending ones (adoption passes the rows of an import as
 * pending services: they take a licence at their own IP only), then terminated and failed ones.
 * A book of 100,000 services is paired in turns of the event loop (MATCH_TURN items each, every pass).
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
  await inTurns(services, (svc) => byPriority[PRIORITY[svc.status] ?? 3]!.push(svc));
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
  const serviceIps = new Set<string | undefined>();
  const knownBundleKeys = new Set<string>();
  await inTurns(services, (s) => {
    serviceIps.add(canonicalIp(s.ip));
    if (s.bundle_key) knownBundleKeys.add(s.bundle_key);
  });
  for (const [type, waiting] of missing) {
    if (waiting.length !== 1) continue;
    const orphans: ListedLicense[] = [];
    await inTurns(licenses, (l) => {
      if (l.type === type && !l.free && !claimed.has(l) && !serviceIps.has(canonicalIp(l.ip)) && !(l.bundle_key && knownBundleKeys.has(l.bundle_key))) orphans.push(l);
    });
    if (orphans.length === 1) claim(waiting[0]!, orphans[0]!, "unique");
  }
  return { slots, claimed };
}

/**
 * `each` over `items`, letting the event loop run after every MATCH_TURN of them: over a book of
 * 100,000 licences no single pass (a map built, an IP canonicalised each) holds it long. (Before,
 * the passes up to pairing's first step held it 225 to 286 ms in one stretch; now 23 to 37 ms
 * at most, GC included, in the same time overall.)
 */
async function inTurns<T>(items: Iterable<T>, each: (item: T) => void): Promise<void> {
  let n = 0;
  for (const item of items) {
    each(item);
    if (++n % MATCH_TURN === 0) await yieldToEventLoop();
  }
}

/** Each service's slots, in the order match() made them: it lists a service's slots together. */
function* slotsByService(slots: readonly Slot[]): Generator<Slot[]> {
  for (let i = 0; i < slots.length; ) {
    let j = i + 1;
    while (j < slots.length && slots[j]!.svc === slots[i]!.svc) j++;
    yield slots.slice(i, j);
    i = j;
  }
}

function countServices(slots: readonly Slot[]): number {
  let n = 0;
  for (let i = 0; i < slots.length; i++) if (i === 0 || slots[i]!.svc !== slots[i - 1]!.svc) n++;
  return n;
}

/** The drift of one service's licences, with the repairs `fix` would make. */
function compareService(slots: Slot[], repairs: Repair[]): DriftItem[] {
  const items: DriftItem[] = [];
  const svc = slots[0]!.svc;
  const add = (item: Omit<DriftItem, "service_id" | "ip">, slot: Slot, action?: Repair["action"]): void => {
    const full: DriftItem = { service_id: svc.service_id, ip: svc.ip, ...item };
    items.push(full);
    if (action) repairs.push({ item: full, slot, action });
  };

  // A bundle moves as one: its new IP can be recorded only when every component is at the same one.
  const found = slots.filter((s) => s.license);
  const ips = new Set(found.map((s) => canonicalIp(s.license!.ip)));
  const movedTogether = ips.size === 1 && found.length === slots.length;

  for (const slot of slots) {
    const l = slot.license;
    if (svc.status === "pending") continue; // a registration in flight may or may not have bought it yet
    if (!l) {
      if (!isLive(svc)) continue; // terminated or failed: absent is what we expect
      add(
        {
          kind: "missing_upstream",
          type: slot.type,
          expected: svc.status,
          actual: "absent",
          fixable: false,
          fix: slot.heldBy
            ? `the reseller's ${slot.type} licence at ${svc.ip} is service ${slot.heldBy}'s; sort out which service owns it`
            : `needs a purchase: register ${slot.type} for ${svc.ip} at the reseller (reconcile never buys)`,
        },
        slot,
      );
      continue;
    }
    const actual = upstreamStatus(l);
    if (svc.status === "failed") {
      add(
        {
          kind: "status_differs",
          type: slot.type,
          expected: "absent",
          actual: actual ?? "present",
          fixable: false,
          fix: "the registration failed yet the reseller has the licence: resend service.created (the bridge adopts it and buys nothing), or cancel it at the reseller",
        },
        slot,
      );
      continue;
    }
    if (slot.how !== "ip") {
      add(
        {
          kind: "ip_differs",
          type: slot.type,
          expected: svc.ip,
          actual: l.ip,
          fixable: movedTogether,
          fix: movedTogether
            ? `record ${l.ip} as the service's IP (the reseller's licence is there)`
            : `the licences of this bundle are at different IPs upstream (${[...new Set(found.map((s) => s.license!.ip))].join(", ")}): change-ip them at the reseller, then run reconcile again`,
        },
        slot,
        movedTogether ? "record_ip" : undefined,
      );
    }
    if (actual !== undefined) {
      if (svc.status === "active" && actual !== "active") {
        const suspended = actual === "suspended";
        add(
          {
            kind: "status_differs",
            type: slot.type,
            expected: "active",
            actual,
            fixable: suspended,
            fix: suspended
              ? "record the service as suspended, as the reseller has it"
              : `the reseller has the licence ${actual}: renew or reactivate it at the reseller (reconcile never buys)`,
          },
          slot,
          suspended ? "record_suspended" : undefined,
        );
      } else if ((svc.status === "suspended" || svc.status === "terminated") && actual === "active") {
        add(
          {
            kind: "status_differs",
            type: slot.type,
            expected: "suspended",
            actual,
            fixable: true,
            fix: `suspend the ${slot.type} licence at ${l.ip} at the reseller (the service is ${svc.status})`,
          },
          slot,
          "suspend_upstream",
        );
      }
    }
    if (slot.type === "litespeed" && l.variant && svc.status !== "terminated") {
      const expected = svc.upstream_variant ?? svc.variant ?? "litespeed";
      if (l.variant !== expected) {
        add(
          {
            kind: "variant_differs",
            type: slot.type,
            expected,
            actual: l.variant,
            fixable: true,
            fix: `record ${l.variant} as the licence's variant upstream`,
          },
          slot,
          "record_variant",
        );
      }
    }
  }
  return items;
}

/**
 * Upstream licences no service accounts for; free companions and known bundles' components are
 * accounted for. In turns of the event loop, as match() is.
 */
export async function unaccounted(services: readonly ServiceBrief[], slots: readonly Slot[], licenses: readonly ListedLicense[], claimed: Claimed): Promise<ListedLicense[]> {
  const cpanelIps = new Set<string | undefined>();
  await inTurns(slots, (s) => {
    if (s.type !== "cpanel") return;
    cpanelIps.add(canonicalIp(s.svc.ip));
    if (s.license) cpanelIps.add(canonicalIp(s.license.ip));
  });
  const bundleKeys = new Set<string>();
  await inTurns(services, (s) => {
    if (s.bundle_key) bundleKeys.add(s.bundle_key);
  });
  const out: ListedLicense[] = [];
  await inTurns(licenses, (l) => {
    if (claimed.has(l) || l.free) return;
    if (COMPANION_TYPES.includes(l.type) && cpanelIps.has(canonicalIp(l.ip))) return;
    if (l.bundle_key && bundleKeys.has(l.bundle_key)) return;
    out.push(l);
  });
  return out;
}

async function unknownLocally(services: readonly ServiceBrief[], slots: readonly Slot[], licenses: readonly ListedLicense[], claimed: Claimed): Promise<DriftItem[]> {
  return (await unaccounted(services, slots, licenses, claimed)).map((l) => ({
      kind: "unknown_locally" as const,
      service_id: null,
      ip: l.ip,
      type: l.type,
      expected: "absent",
      actual: upstreamStatus(l) ?? "present",
      fixable: false,
      fix: "no service accounts for it: cancel it at the reseller, or send service.created for it (the bridge adopts it and buys nothing)",
    }));
}

/** Compares the bridge with the reseller and, with `fix`, repairs what needs no purchase. */
export async function reconcile(deps: ReconcileDeps, options: ReconcileOptions = {}): Promise<ReconcileResult> {
  const { store, upstream } = deps;
  const licenses = await upstream.listLicenses();
  const services = await readServiceBriefs(store);
  const { slots, claimed } = await match(services, licenses);

  const drift: DriftItem[] = [];
  const repairs: Repair[] = [];
  const total = countServices(slots);
  let done = 0;
  for (const group of slotsByService(slots)) {
    for (const item of compareService(group, repairs)) drift.push(item);
    done++; // not in onProgress's argument: without a callback, that is never evaluated
    options.onProgress?.({ phase: "compare", done, total });
    // A book of 100,000 services is compared in turns, so a probe or a webhook is answered meanwhile.
    if (done % COMPARE_TURN === 0) await yieldToEventLoop();
  }
  for (const item of await unknownLocally(services, slots, licenses, claimed)) drift.push(item);

  if (!options.fix) return { drift, fixed: [], manual: drift.filter((d) => !d.fixable) };

  const fixed: HandledItem[] = [];
  const manual: HandledItem[] = drift.filter((d) => !d.fixable);
  // Services with a lifecycle job queued or running are mid-change: reconcile reports but does not touch them.
  const busy = await store.services.busy(MOVING_KINDS);
  const repairsBySvc = new Map<string, Repair[]>();
  for (const r of repairs) addTo(repairsBySvc, r.slot.svc.service_id, r);
  done = 0;
  const queued: QueuedSuspension[] = [];
  for (const [serviceId, list] of repairsBySvc) {
    if (busy.has(serviceId)) {
      const why = "a job for this service is queued or running; run reconcile again when it has finished";
      manual.push(...list.map((r) => ({ ...r.item, fix: why })));
    } else {
      const outcome = await repairService(deps, serviceId, list, options.audit);
      fixed.push(...outcome.fixed);
      manual.push(...outcome.manual);
      queued.push(...outcome.queued);
    }
    options.onProgress?.({ phase: "fix", done: ++done, total: repairsBySvc.size });
  }
  const settled = await awaitSuspensions(deps, queued, options.waitMs ?? 15_000);
  fixed.push(...settled.fixed);
  manual.push(...settled.manual);
  return { drift, fixed, manual };
}

interface QueuedSuspension {
  item: DriftItem;
  jobId: number;
  what: string;
}

/** Waits (up to `waitMs`) for the queued suspensions; what is not carried out by then goes to the person. */
async function awaitSuspensions(deps: ReconcileDeps, queued: QueuedSuspension[], waitMs: number): Promise<{ fixed: HandledItem[]; manual: HandledItem[] }> {
  const fixed: HandledItem[] = [];
  const manual: HandledItem[] = [];
  const waiter = new JobWaiter(deps.store.jobs, 100);
  const deadline = Date.now() + waitMs;
  const jobs = await Promise.all(queued.map((q) => waiter.until(q.jobId, deadline)));
  queued.forEach((q, i) => {
    const job = jobs[i];
    if (job?.state === "succeeded") fixed.push({ ...q.item, fix: `suspended ${q.what} at the reseller (job ${q.jobId})` });
    else if (job?.state === "failed" || job?.state === "blocked" || job?.state === "cancelled") {
      manual.push({ ...q.item, fix: `suspend ${q.what} at the reseller`, error: job.lastError ?? `job ${q.jobId} ${job.state}` });
    } else {
      manual.push({ ...q.item, fix: `queued as job ${q.jobId} to suspend ${q.what} at the reseller; not done yet: is the service running? (license-bridge jobs list)` });
    }
  });
  return { fixed, manual };
}

/**
 * Repairs one service in one transaction: upstream suspensions are queued as jobs in the
 * service's own queue (never called from here, where they could cross a queued unsuspend), and
 * what the bridge records is written. When the service changed since reconcile read it, its own
 * jobs moved it: their word wins, and the drift is reported again next run.
 */
async function repairService(deps: ReconcileDeps, serviceId: string, repairs: Repair[], audit?: AuditDraft): Promise<{ fixed: HandledItem[]; manual: HandledItem[]; queued: QueuedSuspension[] }> {
  const fixed: HandledItem[] = [];
  const seen = repairs[0]!.slot.svc;
  const history: NewHistory[] = [];
  const note = (action: string, detail: string) => history.push({ action: `reconcile: ${action}`, detail });
  const suspensions = repairs.filter((x) => x.action === "suspend_upstream");
  const enqueue = suspensions.map((r) =>
    jobOf(ENFORCE_SUSPENSION, { ip: r.slot.license!.ip, type: r.slot.type as ProductType, seen_at: seen.updated_at }, { serviceId, queueKey: serviceQueueKey(serviceId) }),
  );
  const patch: ServicePatch = {};
  for (const r of repairs.filter((x) => x.action !== "suspend_upstream")) {
    const l = r.slot.license!;
    switch (r.action) {
      case "record_suspended":
        if (patch.status !== "suspended") {
          patch.status = "suspended";
          note("suspended", `the reseller has the ${r.slot.type} licence at ${l.ip} suspended; recorded the service as suspended (was active)`);
        }
        fixed.push({ ...r.item, fix: "recorded the service as suspended, as the reseller has it" });
        break;
      case "record_ip":
        if (patch.ip === undefined) {
          patch.ip = l.ip;
          note("ip recorded", `the reseller has the licence at ${l.ip}, the bridge had ${seen.ip}; recorded ${l.ip}`);
        }
        fixed.push({ ...r.item, fix: `recorded ${l.ip} as the service's IP` });
        break;
      case "record_variant": {
        patch.upstream_variant = l.variant!;
        const ordered = seen.variant && seen.variant !== l.variant ? `; the customer's product is ${seen.variant}: send service.product_changed to change core` : "";
        note("variant recorded", `the reseller has the licence as ${l.variant}, the bridge had ${r.item.expected}; recorded ${l.variant}${ordered}`);
        fixed.push({ ...r.item, fix: `recorded ${l.variant} as the licence's variant upstream${ordered}` });
        break;
      }
    }
  }
  if (fixed.length > 0) {
    const expiry = upstreamExpiry(repairs.map((r) => r.slot.license!));
    if (expiry !== undefined && expiry !== seen.expires_at) {
      patch.expires_at = expiry;
      note("expiry recorded", `the reseller's licence expires ${new Date(expiry).toISOString()}, the bridge had ${seen.expires_at === null ? "none" : new Date(seen.expires_at).toISOString()}`);
    }
  }
  const entries = audit ? [{ ...audit, detail: repairs.map((r) => `${r.item.kind}: ${r.item.fix ?? r.action}`).join("; ") }] : undefined;
  const { applied, jobIds } = await deps.store.services.change({ serviceId, ifUpdatedAt: seen.updated_at, patch, history, enqueue, audit: entries });
  if (!applied) {
    const raced = (r: Repair): HandledItem => ({ ...r.item, fix: "the service changed while reconcile ran; run reconcile again" });
    return { fixed: [], manual: repairs.map(raced), queued: [] };
  }
  const queued = suspensions.map((r, i) => ({ item: r.item, jobId: jobIds[i]!, what: `the ${r.slot.type} licence at ${r.slot.license!.ip}` }));
  return { fixed, manual: [], queued };
}

/** The earliest expiry the reseller lists for these licences (a bundle ends with its first component). */
function upstreamExpiry(licenses: ListedLicense[]): number | undefined {
  const times = licenses.map((l) => isoToMs(l.expires_at)).filter((t): t is number => t !== undefined);
  return times.length ? Math.min(...times) : undefined;
}
