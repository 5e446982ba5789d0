import { describe, expect, it } from "vitest";
import { untilIdle } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import type { TestBridge, TestSandbox } from "../helpers/bridge.js";
import { runCli } from "../cli/helpers.js";
import { holdUpstream, row, useAdoptionWorld } from "./helpers.js";

type Plan = { plan: { service_identifier: string; action: string; reason: string; cost: number | null }[]; orphans: unknown[] };

const adopt = async (bridge: TestBridge, body: Record<string, unknown>) => {
  const res = await bridge.admin("/admin/adopt", { method: "POST", body: JSON.stringify(body) });
  expect(res.status).toBe(200);
  return res.body as unknown as Plan;
};
/** The paid licences the reseller holds at `ip` (a cPanel licence brings free companions along), by type. */
const upstreamAt = (sb: TestSandbox, ip: string) =>
  sb.sandbox
    .licenses()
    .filter((l) => l.ip === ip && ["cpanel", "cloudlinux"].includes(l.type))
    .map((l) => ({ type: l.type, status: l.status }))
    .sort((a, b) => a.type.localeCompare(b.type));

describe("adopting a service the panel has suspended", () => {
  const world = useAdoptionWorld();

  it("buys nothing when the reseller holds no licence for it: a conflict in the plan, and apply --buy orders nothing", async () => {
    const { sb, bridge } = world();
    const services = [row({ service_identifier: "s-none", ip: "203.0.113.140", status: "Suspended" })];
    const charges = sb.sandbox.ledger().length;

    const plan = await adopt(bridge, { services });
    expect(plan.plan).toEqual([{ service_identifier: "s-none", provider: "reseller", action: "conflict", reason: expect.stringContaining("suspended in the panel"), cost: null }]);

    const applied = await adopt(bridge, { services, apply: true, buy: true });
    expect(applied.plan).toEqual(plan.plan);
    await untilIdle(bridge);
    expect(sb.sandbox.ledger()).toHaveLength(charges);
    expect(upstreamAt(sb, "203.0.113.140")).toEqual([]);
    expect(await bridge.service.services.get("s-none")).toBeUndefined();
  });

  it("is adopted suspended onto active licences, each then suspended at the reseller by a job in the service's queue, buying nothing", async () => {
    const { sb, bridge } = world();
    await holdUpstream(sb, "203.0.113.141", "cpanel");
    await holdUpstream(sb, "203.0.113.142", "cpanel");
    await holdUpstream(sb, "203.0.113.142", "cloudlinux");
    const services = [
      row({ service_identifier: "s-active", ip: "203.0.113.141", status: "suspended" }),
      row({ service_identifier: "s-bundle", package_identifier: "20", ip: "203.0.113.142", status: "suspended" }),
    ];
    const charges = sb.sandbox.ledger().length;

    const applied = await adopt(bridge, { services, apply: true });
    expect(applied.plan.map((i) => [i.service_identifier, i.action, i.cost])).toEqual([
      ["s-active", "adopt", 0],
      ["s-bundle", "adopt", 0],
    ]);
    await untilIdle(bridge);

    expect(await bridge.service.services.get("s-active")).toMatchObject({ status: "suspended" });
    expect(await bridge.service.services.get("s-bundle")).toMatchObject({ status: "suspended" });
    expect(upstreamAt(sb, "203.0.113.141")).toEqual([{ type: "cpanel", status: "suspended" }]);
    expect(upstreamAt(sb, "203.0.113.142")).toEqual([
      { type: "cloudlinux", status: "suspended" },
      { type: "cpanel", status: "suspended" },
    ]);
    const repairs = async (id: string) => (await bridge.service.store.jobs.list({ serviceId: id })).map((j) => [j.kind, j.state]);
    expect(await repairs("s-active")).toEqual([["enforce_suspension", "succeeded"]]);
    expect(await repairs("s-bundle")).toEqual([
      ["enforce_suspension", "succeeded"],
      ["enforce_suspension", "succeeded"],
    ]);
    expect(sb.sandbox.ledger()).toHaveLength(charges);
  });

  it("is adopted suspended onto a suspended licence with no repair to make", async () => {
    const { sb, bridge } = world();
    await holdUpstream(sb, "203.0.113.143", "cpanel", { suspended: true });
    const charges = sb.sandbox.ledger().length;

    const applied = await adopt(bridge, { services: [row({ service_identifier: "s-both", ip: "203.0.113.143", status: "suspended" })], apply: true });
    expect(applied.plan.map((i) => i.action)).toEqual(["adopt"]);
    await untilIdle(bridge);

    expect(await bridge.service.services.get("s-both")).toMatchObject({ status: "suspended" });
    expect(await bridge.service.store.jobs.list({ serviceId: "s-both" })).toEqual([]);
    expect(upstreamAt(sb, "203.0.113.143")).toEqual([{ type: "cpanel", status: "suspended" }]);
    expect(sb.sandbox.ledger()).toHaveLength(charges);
  });

  it("is not mailed the install command when the import asks for mail: a suspended licence is not one to install", async () => {
    const { sb, bridge, smtp } = world();
    await holdUpstream(sb, "203.0.113.147", "cpanel", { suspended: true });
    await holdUpstream(sb, "203.0.113.148", "cpanel");

    const applied = await adopt(bridge, {
      services: [
        row({ service_identifier: "m-suspended", ip: "203.0.113.147", status: "suspended", customer_email: "sue@example.com" }),
        row({ service_identifier: "m-active", ip: "203.0.113.148", customer_email: "ann@example.com" }),
      ],
      apply: true,
      mail: true,
    });
    expect(applied.plan.map((i) => i.action)).toEqual(["adopt", "adopt"]);
    await waitFor(() => smtp.messages.length >= 1, 10_000, "the active service's install mail");
    await untilIdle(bridge);

    expect(smtp.messages.map((m) => m.envelope.to)).toEqual([["ann@example.com"]]);
    expect(await bridge.service.store.jobs.list({ serviceId: "m-suspended" })).toEqual([]);
  });

  it("is not renewed by renew --due, which renews the active service adopted with it", async () => {
    const { sb, bridge } = world();
    await holdUpstream(sb, "203.0.113.144", "cpanel");
    await holdUpstream(sb, "203.0.113.145", "cpanel");
    await holdUpstream(sb, "203.0.113.146", "cpanel", { suspended: true });
    await adopt(bridge, {
      services: [
        row({ service_identifier: "r-active", ip: "203.0.113.144" }),
        row({ service_identifier: "r-suspended", ip: "203.0.113.145", status: "suspended" }),
        row({ service_identifier: "r-both", ip: "203.0.113.146", status: "suspended" }),
      ],
      apply: true,
    });
    await untilIdle(bridge);

    // A lead of 40 days makes a fresh monthly licence, paid until 2030, due at once.
    const run = await runCli(["renew", "--due", "--json"], { ...bridge.env, RENEWAL_LEAD_DAYS: "40" });
    expect(run.code, run.stderr).toBe(0);
    expect(run.json<{ queued: { service_id: string }[] }>().queued.map((q) => q.service_id)).toEqual(["r-active"]);
    await waitFor(() => sb.sandbox.ledger().some((c) => c.op === "renew"), 10_000, "the active service's renewal");
    await untilIdle(bridge);
    expect(sb.sandbox.ledger().filter((c) => c.op === "renew").map((c) => c.ip)).toEqual(["203.0.113.144"]);
  });
});
