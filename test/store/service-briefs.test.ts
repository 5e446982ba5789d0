import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { BRIEF_PAGE, readServiceBriefs } from "../../src/reconcile/service-briefs.js";
import type { AdoptedService, ServiceBrief, ServiceRow, Store } from "../../src/store/store.js";
import { STORE_FACTORIES, type OpenedStore } from "../helpers/stores.js";

// Reconcile and the adoption plan hold every service of the book at once (issue 25: 100,000), so
// they read them as briefs, the columns they compare, a page at a time by service id, and a SQLite
// read runs on the event loop: the loop turns between two pages (shown, as the export's test
// does, without timings).

/** More services than two pages hold. */
const BOOK = 2 * BRIEF_PAGE + 37;
const BRIEF_KEYS = ["service_id", "kind", "type", "bundle", "bundle_key", "variant", "upstream_variant", "ip", "status", "expires_at", "updated_at", "provider", "sku", "upstream_id"];

function service(i: number): AdoptedService {
  const bundle = i % 3 === 0;
  return {
    service_id: `svc-${String(i).padStart(5, "0")}`,
    product_id: bundle ? "20" : "13",
    kind: bundle ? "bundle" : "licence",
    type: bundle ? null : "litespeed",
    bundle: bundle ? "cpanel-cloudlinux" : null,
    bundle_key: bundle ? `bk-${i}` : null,
    variant: bundle ? null : "litespeed4",
    upstream_variant: bundle ? null : "litespeed8",
    ip: `198.51.${100 + (i >> 8)}.${i & 255}`,
    billing_cycle: "monthly",
    months: 1,
    status: i % 5 === 0 ? "suspended" : "active",
    customer_email: `c${i}@example.com`,
    customer_name: `Customer ${i}`,
    expires_at: i % 7 === 0 ? null : 1_900_000_000_000 + i,
    paid_until: null,
    companions: "[]",
    order_event_id: null,
  };
}

const briefOf = (row: ServiceRow): ServiceBrief => Object.fromEntries(BRIEF_KEYS.map((k) => [k, row[k as keyof ServiceRow]])) as ServiceBrief;

describe.each(STORE_FACTORIES)("the services as briefs on $name", (factory) => {
  if (factory.skip) {
    it.skip(`skipped: ${factory.skip}`, () => {});
    return;
  }

  let opened: OpenedStore;
  let store: Store;
  beforeAll(async () => {
    opened = await factory.open({ clock: manualClock(Date.UTC(2026, 0, 1)) });
    store = opened.store;
    const writes = Array.from({ length: BOOK }, (_, i) => ({ service: service(i), history: [] }));
    const { inserted } = await store.adoption.insert(writes, () => undefined);
    expect(inserted).toHaveLength(BOOK);
  }, 60_000);
  afterAll(async () => {
    await opened?.close();
  });

  it("are read a page at a time by service id, every service once, with the loop turning between two pages", async () => {
    const log: string[] = [];
    const limits: number[] = [];
    const paged: Pick<Store, "services"> = {
      services: {
        ...store.services,
        briefs: async (after, limit) => {
          log.push("page");
          limits.push(limit);
          return store.services.briefs(after, limit);
        },
      },
    };
    let done = false;
    // Stands for the rest of the process (a probe, a webhook): runs whenever the loop turns.
    const others = (async () => {
      while (!done) {
        log.push("turn");
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();

    const briefs = await readServiceBriefs(paged);
    done = true;
    await others;

    expect(limits).toEqual([BRIEF_PAGE, BRIEF_PAGE, BRIEF_PAGE]);
    expect(log.join(" ")).not.toContain("page page");
    expect(briefs.map((b) => b.service_id)).toEqual(Array.from({ length: BOOK }, (_, i) => service(i).service_id));
  });

  it("hold the columns reconcile compares, as the rows have them, and nothing else", async () => {
    const rows = await store.services.list();
    const briefs = await readServiceBriefs(store);

    for (const brief of briefs) expect(Object.keys(brief).sort()).toEqual([...BRIEF_KEYS].sort());
    expect(briefs).toEqual(rows.map(briefOf));
  });

  it("start after the service id given", async () => {
    const page = await store.services.briefs(service(BOOK - 3).service_id, BRIEF_PAGE);
    expect(page.map((b) => b.service_id)).toEqual([service(BOOK - 2).service_id, service(BOOK - 1).service_id]);
  });
});
