import { describe, expect, it } from "vitest";
import { runAdoption } from "../../src/adoption/adopt.js";
import { cataloguePrices } from "../../src/catalog/prices.js";
import { parseRows } from "../../src/adoption/rows.js";
import { createIntake } from "../../src/intake/intake.js";
import { orderActive, untilIdle, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import type { TestBridge } from "../helpers/bridge.js";
import { holdUpstream, row, useAdoptionWorld } from "./helpers.js";

type Plan = { plan: { service_identifier: string; provider: string | null; action: string; reason: string; cost: number | null }[]; orphans: unknown[] };

const adopt = async (bridge: TestBridge, body: Record<string, unknown>) => {
  const res = await bridge.admin("/admin/adopt", { method: "POST", body: JSON.stringify(body) });
  return { status: res.status, body: res.body as unknown as Plan & Record<string, unknown> };
};
const actions = (p: Plan) => Object.fromEntries(p.plan.map((i) => [i.service_identifier, i.action]));

describe("adopting a running book (POST /admin/adopt)", () => {
  const world = useAdoptionWorld();

  /** Licences that match, differ in variant, belong to another service, or to nobody; rows for them and for nothing. */
  async function book() {
    const { sb, bridge } = world();
    await holdUpstream(sb, "203.0.113.70", "cpanel");
    await holdUpstream(sb, "203.0.113.71", "litespeed", { variant: "litespeed8" });
    await holdUpstream(sb, "203.0.113.73", "cloudlinux");
    await holdUpstream(sb, "203.0.113.75", "cpanel", { suspended: true });
    const theirs = await orderActive(bridge, { product_id: "12", ip: "203.0.113.72" });
    await untilIdle(bridge);
    const services = [
      row({ service_identifier: "a-match", ip: "203.0.113.70" }),
      row({ service_identifier: "b-variant", package_identifier: "13", ip: "203.0.113.71" }),
      row({ service_identifier: "c-taken", ip: "203.0.113.72" }),
      row({ service_identifier: "d-missing", ip: "203.0.113.74", billing_cycle: "Annually" }),
      row({ service_identifier: theirs, ip: "203.0.113.72" }),
      row({ service_identifier: "f-product", package_identifier: "999", ip: "203.0.113.76" }),
      row({ service_identifier: "g-private", ip: "10.0.0.5" }),
      row({ service_identifier: "h-suspended", ip: "203.0.113.75" }),
    ];
    return { theirs, services };
  }

  it("plans each row against the reseller's list: adopt, buy with its price, conflicts with their reason, managed; orphans with their monthly cost", async () => {
    const { sb, bridge } = world();
    const { theirs, services } = await book();
    const before = { charges: sb.sandbox.ledger().length, services: (await bridge.service.store.counts()).services };

    const { status, body } = await adopt(bridge, { services, apply: false });

    expect(status).toBe(200);
    expect(actions(body)).toEqual({
      "a-match": "adopt",
      "b-variant": "conflict",
      "c-taken": "conflict",
      "d-missing": "buy",
      [theirs]: "managed",
      "f-product": "conflict",
      "g-private": "conflict",
      "h-suspended": "adopt",
    });
    const item = (id: string) => body.plan.find((i) => i.service_identifier === id)!;
    expect(item("a-match").cost).toBe(0);
    expect(item("a-match").provider).toBe("reseller");
    expect(item("f-product").provider).toBeNull();
    expect(item("d-missing").cost).toBe(180);
    expect(item("b-variant").reason).toMatch(/litespeed8.*litespeed4/);
    expect(item("c-taken").reason).toContain(`service ${theirs}`);
    expect(item("f-product").reason).toContain('unknown product "999"');
    expect(item("g-private").reason).toContain("10.0.0.5");
    expect(body.orphans).toEqual([{ provider: "reseller", ip: "203.0.113.73", type: "cloudlinux", monthly_cost: 12 }]);
    // A plan writes nothing and buys nothing.
    expect(sb.sandbox.ledger()).toHaveLength(before.charges);
    expect((await bridge.service.store.counts()).services).toBe(before.services);
  });

  it("applies the adoptions as the reseller holds them, buying and mailing nothing; a second run finds them managed and changes nothing", async () => {
    const { sb, bridge, smtp } = world();
    const { services } = await book();
    const charges = sb.sandbox.ledger().length;
    const balance = sb.sandbox.balance();
    const mails = smtp.messages.length;
    const upstream = (ip: string) => sb.sandbox.licenses().find((l) => l.ip === ip && l.type === "cpanel")!;

    const first = await adopt(bridge, { services, apply: true });

    expect(first.status).toBe(200);
    expect(actions(first.body)["a-match"]).toBe("adopt");
    expect(await bridge.service.services.get("a-match")).toMatchObject({
      status: "active",
      ip: "203.0.113.70",
      type: "cpanel",
      expires_at: Date.parse(upstream("203.0.113.70").expires_at),
      paid_until: Date.parse("2030-01-01"),
      customer_email: "ann@example.com",
    });
    expect(await bridge.service.services.get("h-suspended")).toMatchObject({ status: "suspended", expires_at: Date.parse(upstream("203.0.113.75").expires_at) });
    expect((await bridge.service.services.history("a-match")).map((h) => h.action)).toEqual(["adopted from import"]);
    for (const id of ["b-variant", "c-taken", "d-missing", "f-product", "g-private"]) expect(await bridge.service.services.get(id)).toBeUndefined();
    expect(await bridge.service.store.jobs.list({ serviceId: "a-match" })).toEqual([]);
    await untilIdle(bridge);
    expect(sb.sandbox.ledger()).toHaveLength(charges);
    expect(sb.sandbox.balance()).toBe(balance);
    expect(smtp.messages).toHaveLength(mails);

    const counts = await bridge.service.store.counts();
    const second = await adopt(bridge, { services, apply: true });
    expect(actions(second.body)).toMatchObject({ "a-match": "managed", "h-suspended": "managed" });
    expect(second.body.plan.filter((i) => i.action === "adopt")).toEqual([]);
    expect(await bridge.service.store.counts()).toEqual(counts);
    expect(sb.sandbox.ledger()).toHaveLength(charges);
  });

  it("an apply interrupted after its first batch is finished by the next run, each service written once", async () => {
    const { sb, bridge } = world();
    await holdUpstream(sb, "203.0.113.80", "cpanel");
    await holdUpstream(sb, "203.0.113.81", "cpanel");
    await holdUpstream(sb, "203.0.113.82", "cloudlinux");
    const parsed = parseRows([
      row({ service_identifier: "r1", ip: "203.0.113.80" }),
      row({ service_identifier: "r2", ip: "203.0.113.81" }),
      row({ service_identifier: "r3", ip: "203.0.113.82", package_identifier: "17" }),
    ]);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.errors));
    const { store, upstream } = bridge.service;
    const catalog = bridge.config.catalog;
    const deps = { store, upstream, catalog, prices: cataloguePrices(catalog), allowPrivateIps: false, intake: createIntake({ store, catalog }) };

    await expect(
      runAdoption(deps, parsed.rows, {
        apply: true,
        batchSize: 1,
        onBatch: () => {
          throw new Error("the operator's connection dropped");
        },
      }),
    ).rejects.toThrow("dropped");
    expect(await store.services.get("r1")).toMatchObject({ status: "active" });
    expect(await store.services.get("r2")).toBeUndefined();

    const rerun = await adopt(bridge, { services: parsed.rows, apply: true });
    expect(actions(rerun.body)).toEqual({ r1: "managed", r2: "adopt", r3: "adopt" });
    for (const id of ["r1", "r2", "r3"]) expect((await store.services.history(id)).map((h) => h.action)).toEqual(["adopted from import"]);
  });

  it("buys the missing licences only with buy, through the job queue, and mails only with mail", async () => {
    const { sb, bridge, smtp } = world();
    const services = [row({ service_identifier: "quiet", ip: "203.0.113.90" })];
    const charges = sb.sandbox.ledger().length;

    const applied = await adopt(bridge, { services, apply: true });
    expect(actions(applied.body)).toEqual({ quiet: "buy" });
    expect(await bridge.service.services.get("quiet")).toBeUndefined();

    const bought = await adopt(bridge, { services, apply: true, buy: true });
    expect(bought.body.plan[0]).toMatchObject({ action: "buy", cost: 15 });
    await waitStatus(bridge, "quiet", "active");
    await untilIdle(bridge);
    expect(sb.sandbox.ledger()).toHaveLength(charges + 1);
    expect(smtp.messages).toHaveLength(0);
    expect((await bridge.service.services.history("quiet")).map((h) => h.action)).toContain("install mail not sent");

    const loud = [row({ service_identifier: "loud", ip: "203.0.113.91", customer_email: "bob@example.com" })];
    await holdUpstream(sb, "203.0.113.91", "cpanel");
    const mailed = await adopt(bridge, { services: loud, apply: true, mail: true });
    expect(actions(mailed.body)).toEqual({ loud: "adopt" });
    await waitFor(() => smtp.messages.length === 1, 10_000, "the install mail");
    expect(smtp.messages[0]!.envelope.to).toEqual(["bob@example.com"]);
    expect(sb.sandbox.ledger()).toHaveLength(charges + 2);
  });

  it("a second row on one licence is a conflict naming the first row's service, in the plan as when applied, whether the reseller holds it or not", async () => {
    const { sb, bridge } = world();
    await holdUpstream(sb, "203.0.113.150", "cpanel");
    const services = [
      row({ service_identifier: "held-1", ip: "203.0.113.150" }),
      row({ service_identifier: "held-2", ip: "203.0.113.150" }),
      row({ service_identifier: "free-1", ip: "203.0.113.151" }),
      row({ service_identifier: "free-2", ip: "203.0.113.151" }),
      row({ service_identifier: "bundle-1", package_identifier: "20", ip: "203.0.113.152" }),
      row({ service_identifier: "part-2", package_identifier: "17", ip: "203.0.113.152" }),
    ];
    const charges = sb.sandbox.ledger().length;
    const outline = (p: Plan) => p.plan.map((i) => [i.service_identifier, i.action, i.cost]);

    const plan = await adopt(bridge, { services });
    expect(outline(plan.body)).toEqual([
      ["held-1", "adopt", 0],
      ["held-2", "conflict", null],
      ["free-1", "buy", 15],
      ["free-2", "conflict", null],
      ["bundle-1", "buy", 25],
      ["part-2", "conflict", null],
    ]);
    const reason = (p: Plan, id: string) => p.plan.find((i) => i.service_identifier === id)!.reason;
    expect(reason(plan.body, "held-2")).toContain("held-1");
    expect(reason(plan.body, "free-2")).toContain("free-1");
    expect(reason(plan.body, "part-2")).toContain("bundle-1");

    const applied = await adopt(bridge, { services, apply: true, buy: true });
    expect(outline(applied.body)).toEqual(outline(plan.body));
    for (const id of ["held-2", "free-2", "part-2"]) expect(reason(applied.body, id)).toBe(reason(plan.body, id));
    for (const id of ["held-1", "free-1", "bundle-1"]) await waitStatus(bridge, id, "active");
    await untilIdle(bridge);
    for (const id of ["held-2", "free-2", "part-2"]) expect(await bridge.service.services.get(id)).toBeUndefined();
    expect(sb.sandbox.ledger().slice(charges).map((c) => [c.op, c.ip, c.type]).sort()).toEqual([
      ["bundle", "203.0.113.152", "cpanel-cloudlinux"],
      ["register", "203.0.113.151", "cpanel"],
    ]);
  });

  it("refuses a bad row with 422 naming the row and field, and writes nothing", async () => {
    const { bridge } = world();
    const counts = await bridge.service.store.counts();
    const services = [
      row({ service_identifier: "ok", ip: "203.0.113.10" }),
      row({ service_identifier: "x", ip: "203.0.113.11" }),
      row({ service_identifier: "bad-ip", ip: "not-an-ip" }),
      row({ service_identifier: "no-product", package_identifier: undefined, ip: "203.0.113.12" }),
      row({ service_identifier: "x", ip: "203.0.113.13", billing_cycle: "weekly", colour: "blue" }),
    ];

    const res = await adopt(bridge, { services, apply: true });

    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: "validation", field: "services[2].ip" });
    expect(Object.keys(res.body.errors as object).sort()).toEqual(
      ["services[2].ip", "services[3].package_identifier", "services[4].billing_cycle", "services[4].colour"].sort(),
    );
    expect((res.body.errors as Record<string, string[]>)["services[3].package_identifier"]).toEqual(["is required"]);
    expect(await bridge.service.store.counts()).toEqual(counts);

    const dup = await adopt(bridge, { services: services.slice(0, 2).concat(row({ service_identifier: "x", ip: "203.0.113.14" })) });
    expect(dup.status).toBe(422);
    expect(Object.keys(dup.body.errors as object)).toEqual(["services[2].service_identifier"]);

    const flag = await adopt(bridge, { services: [], buy: true });
    expect(flag).toMatchObject({ status: 422, body: { field: "buy" } });
  });
});
