import type { AuditDraft, ServiceBrief, Store } from "../store/store.js";
import { compareService, compareUnclaimed, countServices, slotsByService } from "./compare.js";
import type { DriftItem, HandledItem, Repair } from "./drift.js";
import { licenceLists, readLists, RESELLER_SOURCE, type ListSource, type ListSources } from "./lists.js";
import { match, providerOfService, unaccounted } from "./match.js";
import { repairDrift } from "./repair.js";
import { readServiceBriefs } from "./service-briefs.js";
import { inTurns } from "./turns.js";
import type { ProviderName } from "../vocabulary/provider-names.js";

/**
 * Reconcile: the bridge's licences (services table) against each configured provider's licence
 * list (the reseller's `/license/list`, Manage2's XMLlicenseInfo, CLN's `list`). It reads them,
 * pairs each service with its own provider's licences (match.ts), reports every difference as a
 * drift item naming the provider (one rule per kind, rules/) and, when asked, repairs what needs
 * no purchase (repair.ts). It never registers, renews or reactivates: anything that costs money
 * is left for a person.
 */

export { DRIFT_KINDS, type DriftItem, type DriftKind, type HandledItem } from "./drift.js";
export { LicenceListError } from "./lists.js";
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

/** Where the lists are read (`upstream`: the reseller's; `providers`: every configured one), and the store. */
export interface ReconcileDeps extends ListSources {
  /** Upstream suspensions are queued here, in each service's own order, for the service's runner. */
  store: Store;
}

/**
 * Compares the bridge with each configured provider and, with `fix`, repairs what needs no
 * purchase. A service of a provider whose list was not read (one no longer configured) is not
 * compared: with nothing to compare it with, it would only be reported missing.
 */
export async function reconcile(deps: ReconcileDeps, options: ReconcileOptions = {}): Promise<ReconcileResult> {
  const { store } = deps;
  const { licenses, sources } = await readLists(licenceLists(deps));
  const services = listedProviders(await readServiceBriefs(store), sources);
  const { slots, claimed } = await match(services, licenses);
  const sourceOf = (provider: ProviderName): ListSource => sources.get(provider) ?? RESELLER_SOURCE;

  const drift: DriftItem[] = [];
  const repairs: Repair[] = [];
  const total = countServices(slots);
  let done = 0;
  // A book of 100,000 services is compared in turns, so a probe or a webhook is answered meanwhile.
  await inTurns(slotsByService(slots), (service) => {
    for (const item of compareService(service, repairs, sourceOf)) drift.push(item);
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

/** The services whose provider's list was read; the whole book (the same array) when every one's was. */
export function listedProviders(services: ServiceBrief[], sources: ReadonlyMap<ProviderName, ListSource>): ServiceBrief[] {
  return services.every((s) => sources.has(providerOfService(s))) ? services : services.filter((s) => sources.has(providerOfService(s)));
}
