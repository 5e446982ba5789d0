import type { Catalog } from "../catalog/catalog.js";
import type { Clock } from "../clock.js";
import type { ProviderRegistry } from "../providers/registry.js";
import type { Store } from "../store/store.js";

export interface LifecycleDeps {
  store: Store;
  /** Who sells each service's licences: the jobs ask the provider port, never a client. */
  providers: ProviderRegistry;
  catalog: Catalog;
  clock: Clock;
  /** RESELLER_SETTLE_SECONDS in ms: how long a charging call whose answer was lost may still take effect. */
  settleMs: number;
}
