import type { Catalog } from "../catalog/catalog.js";
import type { Clock } from "../jobs/clock.js";
import type { JobQueue } from "../jobs/queue.js";
import type { Db } from "../store/database.js";
import type { ServiceStore } from "../store/services.js";
import type { Upstream } from "./upstream.js";

export interface LifecycleDeps {
  db: Db;
  services: ServiceStore;
  queue: JobQueue;
  upstream: Upstream;
  catalog: Catalog;
  clock: Clock;
  /** RESELLER_SETTLE_SECONDS in ms: how long a charging call whose answer was lost may still take effect. */
  settleMs: number;
}
