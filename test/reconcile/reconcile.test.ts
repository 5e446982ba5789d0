import { describe, expect, it } from "vitest";
import { JOB_KINDS, serviceQueueKey } from "../../src/vocabulary/job-kinds.js";
import { reconcile, type ReconcileProgress } from "../../src/reconcile/reconcile.js";
import { serviceEvent } from "../helpers/bridge.js";
import { orderActive, untilIdle, usePair, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { behindTheBridge, depsOf, purchases } from "./helpers.js";

const HOUR = 3_600_000;

describe("reconcile", () => {
  const pair = usePair();

  it("finds no drift when the bridge and the reseller agree, companions, bundle components and a terminated licence included", async () => {
    const { bridge } = pair();
    await orderActive(bridge, { product_id: "12", ip: "203.0.113.40" });
    const ls = await orderActive(bridge, { product_id: "13", ip: "203.0.113.41" });
    await orderActive(bridge, { product_id: "20", ip: "203.0.113.42" });
    const gone = await orderActive(bridge, { product_id: "17", ip: "203.0.113.43" });
    await bridge.send(serviceEvent("service.terminated", gone));
    await waitStatus(bridge, gone, "terminated");
    await waitFor(async () => (await bridge.service.services.get(ls))?.upstream_variant === "litespeed4");
    await untilIdle(bridge);

    const progress: ReconcileProgress[] = [];
    const result = await reconcile(depsOf(bridge), { onProgress: (p) => progress.push(p) });

    expect(result).toEqual({ drift: [], fixed: [], manual: [] });
    expect(progress.at(-1)).toEqual({ phase: "compare", done: 4, total: 4 });
  });

  it("records as suspended a licence the reseller suspended behind the bridge's back, buying nothing", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { ip: "203.0.113.50" });
    await untilIdle(bridge);
    await behindTheBridge(sb).suspend({ ip: "203.0.113.50", type: "cpanel" });
    const upstreamExpiry = Date.parse(sb.sandbox.licenses().find((l) => l.type === "cpanel")!.expires_at);
    await bridge.service.services.change({ serviceId: id, patch: { expires_at: upstreamExpiry - 86_400_000 } });
    const before = purchases(sb);

    const seen = await reconcile(depsOf(bridge));
    expect(seen.drift).toEqual([
      { kind: "status_differs", provider: "reseller", service_id: id, ip: "203.0.113.50", type: "cpanel", expected: "active", actual: "suspended", fixable: true, fix: expect.any(String) },
    ]);
    expect(seen.fixed).toEqual([]);
    expect((await bridge.service.services.get(id))?.status).toBe("active");

    const repaired = await reconcile(depsOf(bridge), { fix: true });
    expect(repaired.fixed).toEqual([expect.objectContaining({ kind: "status_differs", service_id: id })]);
    expect(repaired.manual).toEqual([]);
    expect(await bridge.service.services.get(id)).toMatchObject({ status: "suspended", expires_at: upstreamExpiry });
    expect((await bridge.service.services.history(id)).slice(-2).map((h) => h.action)).toEqual(["reconcile: suspended", "reconcile: expiry recorded"]);
    expect((await reconcile(depsOf(bridge))).drift).toEqual([]);
    expect(purchases(sb)).toEqual(before);
  });

  it("suspends at the reseller the licences of suspended and terminated services", async () => {
    const { sb, bridge } = pair();
    const paused = await orderActive(bridge, { product_id: "12", ip: "203.0.113.60" });
    const ended = await orderActive(bridge, { product_id: "17", ip: "203.0.113.61" });
    await untilIdle(bridge);
    await bridge.service.services.change({ serviceId: paused, patch: { status: "suspended" } });
    await bridge.service.services.change({ serviceId: ended, patch: { status: "terminated" } });
    const before = purchases(sb);

    const result = await reconcile(depsOf(bridge), { fix: true });

    expect(result.drift).toEqual([
      expect.objectContaining({ kind: "status_differs", service_id: paused, type: "cpanel", expected: "suspended", actual: "active", fixable: true }),
      expect.objectContaining({ kind: "status_differs", service_id: ended, type: "cloudlinux", expected: "suspended", actual: "active", fixable: true }),
    ]);
    expect(result.fixed).toHaveLength(2);
    expect(result.manual).toEqual([]);
    // The cpanel licence's free companions follow it.
    expect(sb.sandbox.licenses().map((l) => [l.ip, l.type, l.status]).sort()).toEqual([
      ["203.0.113.60", "cpanel", "suspended"],
      ["203.0.113.60", "sitepad", "suspended"],
      ["203.0.113.60", "softaculous", "suspended"],
      ["203.0.113.60", "ssl", "suspended"],
      ["203.0.113.61", "cloudlinux", "suspended"],
    ]);
    expect((await bridge.service.services.history(ended)).at(-1)).toMatchObject({ action: "reconcile: suspended upstream" });
    expect((await reconcile(depsOf(bridge))).drift).toEqual([]);
    expect(purchases(sb)).toEqual(before);
  });

  it("records the IPs the reseller moved a licence and a bundle to", async () => {
    const { sb, bridge } = pair();
    const single = await orderActive(bridge, { product_id: "12", ip: "203.0.113.70" });
    const bundle = await orderActive(bridge, { product_id: "20", ip: "203.0.113.71" });
    await untilIdle(bridge);
    const upstream = behindTheBridge(sb);
    await upstream.changeIp({ ip: "203.0.113.70", newip: "198.51.100.70", type: "cpanel" });
    await upstream.changeIp({ ip: "203.0.113.71", newip: "198.51.100.71", type: "cpanel" });
    await upstream.changeIp({ ip: "203.0.113.71", newip: "198.51.100.71", type: "cloudlinux" });
    const before = purchases(sb);

    const result = await reconcile(depsOf(bridge), { fix: true });

    const moves = result.drift.map((d) => [d.kind, d.service_id, d.type, d.expected, d.actual]);
    expect(moves.sort()).toEqual(
      [
        ["ip_differs", single, "cpanel", "203.0.113.70", "198.51.100.70"],
        ["ip_differs", bundle, "cpanel", "203.0.113.71", "198.51.100.71"],
        ["ip_differs", bundle, "cloudlinux", "203.0.113.71", "198.51.100.71"],
      ].sort(),
    );
    expect(result.fixed).toHaveLength(3);
    expect((await bridge.service.services.get(single))?.ip).toBe("198.51.100.70");
    expect((await bridge.service.services.get(bundle))?.ip).toBe("198.51.100.71");
    expect((await bridge.service.services.history(bundle)).filter((h) => h.action === "reconcile: ip recorded")).toHaveLength(1);
    expect((await reconcile(depsOf(bridge))).drift).toEqual([]);
    expect(purchases(sb)).toEqual(before);
  });

  it("records the LiteSpeed core the reseller changed a licence to", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { product_id: "13", ip: "203.0.113.80" });
    await waitFor(async () => (await bridge.service.services.get(id))?.upstream_variant === "litespeed4");
    await untilIdle(bridge);
    await behindTheBridge(sb).changeCore({ ip: "203.0.113.80", old_type: "litespeed4", new_type: "litespeed8" });

    const result = await reconcile(depsOf(bridge), { fix: true });

    expect(result.drift).toEqual([
      expect.objectContaining({ kind: "variant_differs", service_id: id, type: "litespeed", expected: "litespeed4", actual: "litespeed8", fixable: true }),
    ]);
    expect(result.fixed).toHaveLength(1);
    expect(await bridge.service.services.get(id)).toMatchObject({ upstream_variant: "litespeed8", variant: "litespeed4" });
    expect((await bridge.service.services.history(id)).at(-1)?.detail).toContain("the customer's product is litespeed4");
    expect((await reconcile(depsOf(bridge))).drift).toEqual([]);
  });

  it("leaves a missing licence (a purchase) and a licence no service accounts for to a person", async () => {
    const { sb, bridge } = pair();
    // "ghost": a service the bridge has active, whose licence the reseller lost (its state is reset).
    await orderActive(bridge, { id: "ghost", product_id: "19", ip: "203.0.113.91" });
    await untilIdle(bridge);
    sb.sandbox.reset();
    await orderActive(bridge, { product_id: "12", ip: "203.0.113.90" });
    await untilIdle(bridge);
    await behindTheBridge(sb).register({ ip: "203.0.113.92", type: "directadmin", billingcycle: 1 });
    const before = purchases(sb);

    const result = await reconcile(depsOf(bridge), { fix: true });

    const expected = [
      { kind: "missing_upstream", provider: "reseller", service_id: "ghost", ip: "203.0.113.91", type: "plesk", expected: "active", actual: "absent", fixable: false, fix: expect.stringContaining("purchase") },
      { kind: "unknown_locally", provider: "reseller", service_id: null, ip: "203.0.113.92", type: "directadmin", expected: "absent", actual: "active", fixable: false, fix: expect.any(String) },
    ];
    expect(result.drift).toEqual(expected);
    expect(result.fixed).toEqual([]);
    expect(result.manual).toEqual(expected);
    expect((await bridge.service.services.get("ghost"))?.status).toBe("active");
    expect(purchases(sb)).toEqual(before);
  });

  it("reports, but does not touch, a service whose own job is still on its way", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { ip: "203.0.113.95" });
    await untilIdle(bridge);
    await behindTheBridge(sb).suspend({ ip: "203.0.113.95", type: "cpanel" });
    await bridge.service.queue.enqueue({ kind: JOB_KINDS.unsuspend, serviceId: id, queueKey: serviceQueueKey(id), delayMs: HOUR });

    const result = await reconcile(depsOf(bridge), { fix: true });

    expect(result.fixed).toEqual([]);
    expect(result.manual).toEqual([expect.objectContaining({ kind: "status_differs", service_id: id, fix: expect.stringContaining("job") })]);
    expect((await bridge.service.services.get(id))?.status).toBe("active");
  });

  it("queues its upstream suspension in the service's own order, so an unsuspend sent meanwhile is applied after it", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { product_id: "12", ip: "203.0.113.96" });
    await bridge.send(serviceEvent("service.suspended", id));
    await waitStatus(bridge, id, "suspended");
    await untilIdle(bridge);
    await behindTheBridge(sb).unsuspend({ ip: "203.0.113.96", type: "cpanel" }); // drift: the reseller has it active

    await bridge.service.runner.stop(0);
    const result = await reconcile(depsOf(bridge), { fix: true, waitMs: 0 });
    expect(result.manual).toEqual([expect.objectContaining({ kind: "status_differs", service_id: id, fix: expect.stringMatching(/queued as job \d+/) })]);
    // Nothing was sent from reconcile itself: the suspension waits in the service's queue.
    const suspendsBefore = sb.sandbox.requests().filter((r) => r.op === "suspend").length;
    expect((await bridge.send(serviceEvent("service.unsuspended", id))).status).toBe(202);
    expect(sb.sandbox.requests().filter((r) => r.op === "suspend")).toHaveLength(suspendsBefore);

    await bridge.service.runner.start();
    await waitStatus(bridge, id, "active");
    await untilIdle(bridge);
    const last = sb.sandbox.requests().filter((r) => r.op === "suspend" || r.op === "unsuspend").slice(-2).map((r) => r.op);
    expect(last).toEqual(["suspend", "unsuspend"]);
    expect(sb.sandbox.licenses().find((l) => l.ip === "203.0.113.96" && l.type === "cpanel")?.status).toBe("active");
    expect((await reconcile(depsOf(bridge))).drift).toEqual([]);
  });
});
