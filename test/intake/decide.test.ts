import { describe, expect, it } from "vitest";
import { createCatalog } from "../../src/catalog/catalog.js";
import { decide, type Verdict } from "../../src/intake/decide.js";
import type { BillingEvent } from "../../src/intake/event-schema.js";
import type { IntakeDecision, IntakeView, ServiceRow } from "../../src/store/store.js";
import { JOB_KINDS } from "../../src/vocabulary/job-kinds.js";
import type { ServiceStatus } from "../../src/vocabulary/service-statuses.js";
import { queued, row } from "./fixtures.js";

/**
 * The deciding core as a table: an event and the service as its accepted events will leave it
 * (its row and its queue) → the verdict and the job that carries it. Every way in (webhooks,
 * panel adapters, the provisioning API) asks this one function.
 */

const catalog = createCatalog({
  billing_cycles: { monthly: 1, quarterly: 3, semiannually: 6, annually: 12, biennially: 24, triennially: 36 },
  products: { "12": { type: "cpanel" }, "13": { type: "litespeed", variant: "litespeed4" }, "15": { type: "litespeed", variant: "litespeed8" } },
});
const deps = { catalog, allowPrivateIps: false };

const view = (existing: ServiceRow | undefined, unfinished = [] as ReturnType<typeof queued>[], holders: ServiceRow[] = []): IntakeView => ({ existing, unfinished, holders });
const ev = (type: BillingEvent["type"], over: Partial<BillingEvent["service"]> = {}, changes?: BillingEvent["changes"]): BillingEvent =>
  ({ type, service: { id: "s1", ...over }, ...(changes ? { changes } : {}) }) as BillingEvent;
const order = ev("service.created", { product_id: "12", billing_cycle: "monthly", ip: "203.0.113.10", customer: { email: "ann@example.com" } });

/** The verdict, and the kind of job queued (or what the event is answered for), in one line for the table. */
function outcome(d: IntakeDecision<Verdict>): string {
  if (!d.write) return d.result.status === "invalid" ? `invalid ${d.result.code} ${Object.keys(d.result.errors).join(",")}` : d.result.status;
  const r = d.result as Extract<Verdict, { status: "accepted" }>;
  if (d.job) return `accepted, job ${d.job.kind}`;
  return `accepted, nothing to do${r.answerFor ? `, answered for job ${r.answerFor}` : ""}`;
}

const suspendUnderWay = queued(JOB_KINDS.suspend);
const ipChangeUnderWay = queued(JOB_KINDS.changeIp, { ip: "203.0.113.20" });
const cases: [string, BillingEvent, IntakeView, string][] = [
  ["a first order buys", order, view(undefined), "accepted, job register"],
  ["an order of a service that has its licence buys nothing", order, view(row("active")), "accepted, nothing to do"],
  ["an order of a failed service buys again", order, view(row("failed")), "accepted, job register"],
  ["an order of a terminated service reactivates it", order, view(row("terminated")), "accepted, job register"],
  ["an order while its termination is queued waits behind it", order, view(row("active"), [queued(JOB_KINDS.terminate)]), "accepted, job register"],
  ["an order at an IP another service holds is refused", order, view(undefined, [], [row("active", { service_id: "s2" })]), "invalid ip_in_use service.ip"],
  ["an event about an unknown service is 409", ev("service.suspended"), view(undefined), "unknown_service"],
  ["a suspension of an active service suspends", ev("service.suspended"), view(row("active")), "accepted, job suspend"],
  ["a suspension of a suspended service has nothing to do", ev("service.suspended"), view(row("suspended")), "accepted, nothing to do"],
  ["a suspension while one is queued is answered for that one", ev("service.suspended"), view(row("active"), [suspendUnderWay]), `accepted, nothing to do, answered for job ${suspendUnderWay.id}`],
  ["a suspension while the first purchase is queued is queued too", ev("service.suspended"), view(row("pending"), [queued(JOB_KINDS.register)]), "accepted, job suspend"],
  ["an unsuspension of an active service has nothing to do", ev("service.unsuspended"), view(row("active")), "accepted, nothing to do"],
  ["an unsuspension of a suspended service unsuspends", ev("service.unsuspended"), view(row("suspended")), "accepted, job unsuspend"],
  ["a termination terminates", ev("service.terminated"), view(row("active")), "accepted, job terminate"],
  ["a termination of a terminated service has nothing to do", ev("service.terminated"), view(row("terminated")), "accepted, nothing to do"],
  ["any other event for a terminated service is refused", ev("service.suspended"), view(row("terminated")), "invalid service_terminated service.id"],
  ["a renewal records the payment", ev("service.renewed"), view(row("active")), "accepted, job record_payment"],
  ["an IP change moves the licence", ev("service.ip_changed", { ip: "203.0.113.10" }, { ip: "203.0.113.30" }), view(row("active")), "accepted, job change_ip"],
  ["an IP change to the IP it has has nothing to do (the same on every way in)", ev("service.ip_changed", { ip: "203.0.113.10" }, { ip: "203.0.113.10" }), view(row("active")), "accepted, nothing to do"],
  [
    "an IP change to the IP a queued change moves it to is answered for that change",
    ev("service.ip_changed", { ip: "203.0.113.10" }, { ip: "203.0.113.20" }),
    view(row("active"), [ipChangeUnderWay]),
    `accepted, nothing to do, answered for job ${ipChangeUnderWay.id}`,
  ],
  ["an IP change to an unusable address is refused", ev("service.ip_changed", { ip: "203.0.113.10" }, { ip: "127.0.0.1" }), view(row("active")), "invalid ip_unusable changes.ip"],
  [
    "a LiteSpeed core change changes the core",
    ev("service.product_changed", { product_id: "13" }, { product_id: "15" }),
    view(row("active", { product_id: "13", type: "litespeed", variant: "litespeed4" })),
    "accepted, job change_product",
  ],
  [
    "a change to the product it has has nothing to do",
    ev("service.product_changed", { product_id: "13" }, { product_id: "13" }),
    view(row("active", { product_id: "13", type: "litespeed", variant: "litespeed4" })),
    "accepted, nothing to do",
  ],
  ["a change to a product that is not LiteSpeed is refused", ev("service.product_changed", { product_id: "12" }, { product_id: "13" }), view(row("active")), "invalid validation changes.product_id"],
];

describe("the deciding core", () => {
  it.each(cases)("%s", (_name, event, v, expected) => {
    expect(outcome(decide(event, v, deps))).toBe(expected);
  });

  it("an IP change counts against the product's limit only when it changes something", () => {
    const moved = decide(ev("service.ip_changed", { ip: "203.0.113.10" }, { ip: "203.0.113.30" }), view(row("active")), deps);
    const same = decide(ev("service.ip_changed", { ip: "203.0.113.10" }, { ip: "203.0.113.10" }), view(row("active")), deps);
    expect(moved.write && moved.patch).toEqual({ ip_changes: 1 });
    expect(same.write && same.patch).toBeUndefined();
  });

  it("nothing to do is still recorded, with the reason as the event's outcome", () => {
    const d = decide(ev("service.suspended"), view(row("suspended" as ServiceStatus)), deps);
    expect(d.write && d.event).toMatchObject({ outcome: "ignored", detail: "the service is suspended already" });
  });
});

describe("one licence, one service, per provider (section 12)", () => {
  const mixed = createCatalog({
    billing_cycles: { monthly: 1, quarterly: 3, semiannually: 6, annually: 12, biennially: 24, triennially: 36 },
    products: {
      "12": { type: "cpanel" },
      "40": { provider: "manage2", type: "cpanel", package_id: 12345, group_id: 678 },
      "43": { provider: "manage2", type: "cloudlinux", package_id: 555 },
      "41": { provider: "cln", type: "cloudlinux", cln_type: 1 },
    },
  });
  const mixedDeps = { catalog: mixed, allowPrivateIps: false };
  const withCln44 = createCatalog({
    billing_cycles: { monthly: 1 },
    products: {
      "12": { type: "cpanel" },
      "40": { provider: "manage2", type: "cpanel", package_id: 12345, group_id: 678 },
      "43": { provider: "manage2", type: "cloudlinux", package_id: 555 },
      "41": { provider: "cln", type: "cloudlinux", cln_type: 1 },
      "44": { provider: "cln", type: "cloudlinux", cln_type: 1002 },
    },
  });
  const orderOfProduct = (productId: string) => ev("service.created", { product_id: productId, billing_cycle: "monthly", ip: "203.0.113.10", customer: { email: "ann@example.com" } });
  const manage2Cpanel = row("active", { service_id: "s2", product_id: "40", provider: "manage2", sku: "12345" });

  it("writes the provider and what it buys there into the new service's row", () => {
    const d = decide(orderOfProduct("40"), view(undefined), mixedDeps);
    expect(d.write && d.order?.insert).toMatchObject({ provider: "manage2", sku: "12345", type: "cpanel" });
    const r = decide(orderOfProduct("12"), view(undefined), mixedDeps);
    expect(r.write && r.order?.insert).toMatchObject({ provider: "reseller", sku: null, type: "cpanel" });
  });

  it.each([
    ["the same Manage2 package at the IP is refused", "40", [manage2Cpanel], "invalid ip_in_use service.ip"],
    ["another Manage2 package at the IP is bought", "43", [manage2Cpanel], "accepted, job register"],
    ["the reseller's cPanel beside a Manage2 cPanel is another provider's licence", "12", [manage2Cpanel], "accepted, job register"],
    ["a Manage2 cPanel beside the reseller's cPanel likewise", "40", [row("active", { service_id: "s2" })], "accepted, job register"],
    ["the same CLN type at the IP is refused", "41", [row("active", { service_id: "s2", product_id: "41", type: "cloudlinux", provider: "cln", sku: "1" })], "invalid ip_in_use service.ip"],
  ])("%s", (_name, productId, holders, expected) => {
    expect(outcome(decide(orderOfProduct(productId), view(undefined, [], holders), mixedDeps))).toBe(expected);
  });

  const manage2Service = row("active", { product_id: "40", provider: "manage2", sku: "12345" });
  const clnService = row("active", { product_id: "41", type: "cloudlinux", provider: "cln", sku: "1" });
  const changeTo = (from: string, to: string) => ev("service.product_changed", { product_id: from }, { product_id: to });
  it.each([
    ["a Manage2 licence changes to another Manage2 package", changeTo("40", "43"), view(manage2Service), "accepted, job change_product"],
    ["a CLN licence changes to another CLN type", changeTo("41", "44"), view(clnService), "accepted, job change_product"],
    ["a Manage2 licence does not change to a CLN product", changeTo("40", "41"), view(manage2Service), "invalid validation changes.product_id"],
    ["a reseller licence does not change to a Manage2 product", changeTo("12", "40"), view(row("active")), "invalid validation changes.product_id"],
    [
      "a change to a package another service holds at the IP is refused",
      changeTo("40", "43"),
      view(manage2Service, [], [row("active", { service_id: "s2", product_id: "43", provider: "manage2", sku: "555" })]),
      "invalid ip_in_use changes.product_id",
    ],
  ])("%s", (_name, event, v, expected) => {
    expect(outcome(decide(event, v, { ...mixedDeps, catalog: withCln44 }))).toBe(expected);
  });

  it("an order again under another provider forgets the old provider's licence id", () => {
    const d = decide(orderOfProduct("12"), view(row("terminated", { product_id: "40", provider: "manage2", sku: "12345", upstream_id: "L77" })), mixedDeps);
    expect(d.write && d.order?.update).toMatchObject({ provider: "reseller", sku: null, upstream_id: null });
  });
});
