import type { Catalog } from "../catalog/catalog.js";
import type { Clock } from "../clock.js";
import type { Upstream } from "../reseller/upstream.js";
import type { Store } from "../store/store.js";

export interface LifecycleDeps {
  store: Store;
  upstream: Upstream;
  catalog: Catalog;
  clock: Clock;
  /** RESELLER_SETTLE_SECONDS in ms: how long a charging call whose answer was lost may still take effect. */
  settleMs: number;
}
