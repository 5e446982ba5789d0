import type { AdoptionWrite } from "../../src/store/store.js";

/** A licence of the book the export tests write, `i` its number: every third suspended. */
export function adopted(i: number): AdoptionWrite {
  return {
    service: {
      service_id: `exp-${String(i).padStart(5, "0")}`,
      product_id: "13",
      kind: "licence",
      type: "litespeed",
      bundle: null,
      bundle_key: null,
      variant: "litespeed4",
      upstream_variant: "litespeed8",
      ip: `198.51.${100 + (i >> 8)}.${i & 255}`,
      billing_cycle: "monthly",
      months: 1,
      status: i % 3 === 0 ? "suspended" : "active",
      customer_email: `c${i}@example.com`,
      customer_name: `Customer "${i}"`,
      expires_at: i % 7 === 0 ? null : 1_900_000_000_000 + i,
      paid_until: null,
      companions: i % 5 === 0 ? '["cpanel"]' : "[]",
      order_event_id: null,
    },
    history: [],
  };
}
