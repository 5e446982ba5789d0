import { describe, expect, it } from "vitest";
import { runAdoption } from "../../src/adoption/adopt.js";
import { parseRows } from "../../src/adoption/rows.js";
import { cataloguePrices } from "../../src/catalog/prices.js";
import { createIntake } from "../../src/intake/intake.js";
import { reconcile } from "../../src/reconcile/reconcile.js";
import { BRIEF_PAGE } from "../../src/reconcile/service-briefs.js";
import type { Store } from "../../src/store/store.js";
import { orderActive, untilIdle, usePair } from "../helpers/e2e-harness.js";
import { row } from "../adoption/helpers.js";

// Issue 25: at 100,000 licences reconcile held every service row (one read of the whole table)
// and the reseller's list with a copy of each item, past 1 GB. Shown without a large book: what
// reconcile and the adoption plan ask of the store, and what they keep of the list.

/** Each read of the services, with the most rows it may return (a read without a limit returns them all). */
interface Read {
  op: string;
  limit: number;
}

/** The store, with every read of its services that can return many rows written down. */
function watched(store: Store): { store: Store; reads: Read[] } {
  const reads: Read[] = [];
  const services = new Proxy(store.services, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== "function") return value;
      const call = (...args: unknown[]) => (value as (...a: unknown[]) => unknown).apply(target, args);
      switch (prop) {
        case "list":
          return (...args: unknown[]) => (reads.push({ op: "list", limit: (args[1] as number | undefined) ?? Infinity }), call(...args));
        case "page":
          return (...args: unknown[]) => (reads.push({ op: "page", limit: (args[0] as { limit: number }).limit }), call(...args));
        case "briefs":
          return (...args: unknown[]) => (reads.push({ op: "briefs", limit: args[1] as number }), call(...args));
        default:
          return call;
      }
    },
  });
  return { store: new Proxy(store, { get: (target, prop) => (prop === "services" ? services : Reflect.get(target, prop)) }), reads };
}

const largest = (reads: Read[]) => Math.max(...reads.map((r) => r.limit));

describe("reading a book of any size", () => {
  const pair = usePair();

  it("reconcile reads the bridge's services a page at a time, never all of them at once", async () => {
    const { bridge } = pair();
    await orderActive(bridge, { product_id: "12", ip: "203.0.113.140" });
    await orderActive(bridge, { product_id: "17", ip: "203.0.113.141" });
    await untilIdle(bridge);
    const { store, reads } = watched(bridge.service.store);

    const result = await reconcile({ store, upstream: bridge.service.upstream });

    expect(result.drift).toEqual([]);
    expect(reads.map((r) => r.op)).toEqual(["briefs"]);
    expect(largest(reads)).toBeLessThanOrEqual(BRIEF_PAGE);
  });

  it("the adoption plan reads them the same way", async () => {
    const { bridge } = pair();
    const held = await orderActive(bridge, { product_id: "12", ip: "203.0.113.142" });
    await untilIdle(bridge);
    const { store, reads } = watched(bridge.service.store);
    const catalog = bridge.config.catalog;
    const deps = { store, upstream: bridge.service.upstream, catalog, prices: cataloguePrices(catalog), allowPrivateIps: false, intake: createIntake({ store, catalog }) };
    const parsed = parseRows([row({ service_identifier: held, ip: "203.0.113.142" }), row({ service_identifier: "new-one", ip: "203.0.113.143" })]);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));

    const plan = await runAdoption(deps, parsed.rows);

    expect(plan.plan.map((p) => [p.service_identifier, p.action])).toEqual([
      [held, "managed"],
      ["new-one", "buy"],
    ]);
    expect(reads.map((r) => r.op)).toEqual(["briefs"]);
    expect(largest(reads)).toBeLessThanOrEqual(BRIEF_PAGE);
  });

  it("keeps of the reseller's list only what it compares: no copy of each item, no unknown keys", async () => {
    const { sb, bridge } = pair();
    await orderActive(bridge, { product_id: "12", ip: "203.0.113.144" });
    await untilIdle(bridge);
    // The sandbox lists more of each licence (its key, account, billing cycle, dates) than is compared.
    expect(Object.keys(sb.sandbox.licenses()[0]!)).toEqual(expect.arrayContaining(["key", "billingcycle"]));

    const listed = await bridge.service.upstream.listLicenses();

    expect(listed.length).toBeGreaterThan(1);
    const compared = ["ip", "type", "status", "expires_at", "variant", "free", "bundle_key"];
    for (const license of listed) expect(Object.keys(license).filter((k) => !compared.includes(k))).toEqual([]);
    expect(listed.find((l) => l.type === "cpanel")).toEqual({ ip: "203.0.113.144", type: "cpanel", status: "active", expires_at: expect.any(String) });
  });
});
