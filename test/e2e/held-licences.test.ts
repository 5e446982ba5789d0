import { describe, expect, it } from "vitest";
import { createdEvent, serviceEvent } from "../helpers/bridge.js";
import { orderActive, untilIdle, usePair, waitStatus, type Pair } from "../helpers/e2e-harness.js";
import { DEFAULT_SANDBOX_TOKENS } from "../../src/vocabulary/sandbox-identity.js";

/**
 * An order for an IP where the reseller already holds licences (left suspended by a terminated
 * service, or bought outside the bridge): the bridge adopts only what the reseller really holds,
 * as it holds it, buys what is missing, and answers active only once every part is active.
 */

const IP = "203.0.113.77";

async function terminated(bridge: Pair["bridge"], productId: string): Promise<string> {
  const id = await orderActive(bridge, { product_id: productId, ip: IP });
  expect((await bridge.send(serviceEvent("service.terminated", id))).status).toBe(202);
  await waitStatus(bridge, id, "terminated");
  return id;
}

const held = (sb: Pair["sb"]) =>
  sb.sandbox
    .licenses()
    .filter((l) => l.ip === IP && !l.free)
    .map((l) => ({ type: l.type, status: l.status, variant: l.variant ?? null }))
    .sort((a, b) => a.type.localeCompare(b.type));

describe("orders for an IP where the reseller already holds licences", () => {
  const pair = usePair();

  it("a cPanel + CloudLinux bundle where a terminated service left cPanel suspended: cPanel unsuspended and adopted, CloudLinux bought", async () => {
    const { sb, bridge } = pair();
    await terminated(bridge, "12");
    expect(held(sb)).toEqual([{ type: "cpanel", status: "suspended", variant: null }]);

    const order = createdEvent({ product_id: "20", ip: IP });
    expect((await bridge.send(order)).status).toBe(202);
    await waitStatus(bridge, order.service.id, "active");
    await untilIdle(bridge);

    expect(held(sb)).toEqual([
      { type: "cloudlinux", status: "active", variant: null },
      { type: "cpanel", status: "active", variant: null },
    ]);
    expect(sb.sandbox.ledger().map((c) => `${c.op} ${c.type}`)).toEqual(["register cpanel", "register cloudlinux"]);
    const svc = (await bridge.admin(`/admin/services/${order.service.id}`)).body;
    const registered = (svc.history as { action: string; detail: string }[]).find((h) => h.action === "registered");
    expect(registered?.detail).toMatch(/cpanel licence .* suspended.*unsuspended and adopted it/);
    expect(registered?.detail).toMatch(/cloudlinux bought for 1 month/);
  });

  it("LiteSpeed 4 where a terminated service left LiteSpeed 8: adopted as litespeed8, then its core changed to litespeed4; nothing bought", async () => {
    const { sb, bridge } = pair();
    await terminated(bridge, "15");
    expect(held(sb)).toEqual([{ type: "litespeed", status: "suspended", variant: "litespeed8" }]);

    const order = createdEvent({ product_id: "13", ip: IP });
    expect((await bridge.send(order)).status).toBe(202);
    await waitStatus(bridge, order.service.id, "active");
    await untilIdle(bridge);

    expect(held(sb)).toEqual([{ type: "litespeed", status: "active", variant: "litespeed4" }]);
    expect(sb.sandbox.ledger().map((c) => c.op)).toEqual(["register"]); // the terminated service's own
    expect((await bridge.admin("/admin/jobs?state=blocked")).body.jobs).toEqual([]);
    const svc = await bridge.service.services.get(order.service.id);
    expect(svc).toMatchObject({ status: "active", variant: "litespeed4", upstream_variant: "litespeed4" });
    const actions = (await bridge.service.services.history(order.service.id)).map((h) => `${h.action}: ${h.detail}`);
    expect(actions).toContainEqual(expect.stringMatching(/^registered: .*variant litespeed8.*adopted/));
    expect(actions).toContainEqual(expect.stringMatching(/^variant set: change-core litespeed8 → litespeed4/));
  });

  it("a licence bought outside the bridge (in the reseller's panel) is adopted, not bought again", async () => {
    const { sb, bridge } = pair();
    const res = await fetch(`${sb.running.apiUrl}/license/register`, {
      method: "POST",
      headers: { authorization: `Bearer ${DEFAULT_SANDBOX_TOKENS.reseller}`, "content-type": "application/json" },
      body: JSON.stringify({ ip: IP, type: "cpanel", billingcycle: 1 }),
    });
    expect(res.status).toBe(200);
    const order = createdEvent({ product_id: "12", ip: IP });
    await bridge.send(order);
    await waitStatus(bridge, order.service.id, "active");
    await untilIdle(bridge);
    expect(sb.sandbox.ledger()).toHaveLength(1);
    const registered = (await bridge.service.services.history(order.service.id)).find((h) => h.action === "registered");
    expect(registered?.detail).toMatch(/already held the cpanel licence .* adopted it, nothing bought/);
  });
});

describe("a terminated service ordered again, with its licence still held", () => {
  // The lead covers the whole term, so a renewal would be queued at once if the sweep saw a gap.
  const pair = usePair({ env: { RENEWAL_LEAD_DAYS: "40" } });

  it("gets its licence back without a renewal: a paid-until minutes past the kept term is no gap to buy a cycle for", async () => {
    const { sb, bridge } = pair();
    const order = createdEvent({ product_id: "12", ip: IP });
    await bridge.send(order);
    await waitStatus(bridge, order.service.id, "active");
    expect((await bridge.send(serviceEvent("service.terminated", order.service.id))).status).toBe(202);
    await waitStatus(bridge, order.service.id, "terminated");

    expect((await bridge.send({ ...order })).status).toBe(202);
    await waitStatus(bridge, order.service.id, "active");
    await untilIdle(bridge);
    expect((await bridge.service.sweep.sweep()).queued).toEqual([]);
    await untilIdle(bridge);

    expect(sb.sandbox.ledger().map((c) => c.op)).toEqual(["register"]);
    expect(held(sb)).toEqual([{ type: "cpanel", status: "active", variant: null }]);
    const svc = (await bridge.service.services.get(order.service.id))!;
    expect(svc.paid_until! - svc.expires_at!).toBeLessThan(86_400_000);
  });
});
