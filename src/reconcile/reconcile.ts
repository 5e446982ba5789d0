import type { Upstream } from "../reseller/upstream.js";
import type { AuditDraft, Store } from "../store/store.js";
import { compareService, compareUnclaimed, countServices, slotsByService } from "./compare.js";
import type { DriftItem, HandledItem, Repair } from "./drift.js";
import { match, unaccounted } from "./match.js";
import { repairDrift } from "./repair.js";
import { readServiceBriefs } from "./service-briefs.js";
import { inTurns } from "./turns.js";

/**
 * Reconcile: the bridge's licences (services table) against the reseller's `/license/list`.
 * It reads both, pairs them (match.ts), reports every difference as a drift item (one rule per
 * kind, rules/) and, when asked, repairs what needs no purchase (repair.ts). It never registers
 * or renews: anything that costs money is left for a person.
 */

export { DRIFT_KINDS, type DriftItem, type DriftKind, type HandledItem } from "./drift.js";
/** The pairing, reachable from the front as before; the adoption plan imports it from match.ts. */
export { match, unaccounted, type Slot } from "./match.js";

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
  // A book of 100,000 services is compared in turns, so a probe or a webhook is answered meanwhile.
  await inTurns(slotsByService(slots), (service) => {
    for (const item of compareService(service, repairs)) drift.push(item);
    done++; // not in onProgress's argument: without a callback, that is never evaluated
    options.onProgress?.({ phase: "compare", done, total });
  });
  for (const item of compareUnclaimed(await unaccounted(services, slots, licenses, claimed))) drift.push(item);

  if (!options.fix) return { drift, fixed: [], manual: drift.filter((d) => !d.fixable) };
  const { fixed, manual } = await repairDrift(store, drift, repairs, {
    waitMs: options.waitMs ?? 15_000,
    audit: options.audit,
    onProgress: options.onProgress && ((n, of) => options.onProgress!({ phase: "fix", done: n, total: of })),
  });
  return { drift, fixed, manual };
}
