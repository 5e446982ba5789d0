import { describe, expect, it } from "vitest";
import { createdEvent, serviceEvent, TEST_ADMIN_TOKEN } from "../helpers/bridge.js";
import { orderActive, untilIdle, upstreamCalls, usePair, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { behindTheBridge } from "../reconcile/helpers.js";

const DAY = 86_400_000;

describe("lifecycle: service.created", () => {
  const pair = usePair();

  it("registers a cpanel licence once, records its companions and is charged once", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { product_id: "12", ip: "203.0.113.20" });
    const svc = (await bridge.service.services.get(id))!;
    expect(JSON.parse(svc.companions)).toEqual(["softaculous", "sitepad", "ssl"]);
    expect(sb.sandbox.ledger()).toEqual([expect.objectContaining({ op: "register", ip: "203.0.113.20", type: "cpanel", months: 1 })]);
    const upstream = sb.sandbox.licenses().filter((l) => l.ip === "203.0.113.20").map((l) => l.type).sort();
    expect(upstream).toEqual(["cpanel", "sitepad", "softaculous", "ssl"]);
  });

  it("registers the cycle's months upstream (annually → 12)", async () => {
    const { sb, bridge } = pair();
    await orderActive(bridge, { product_id: "17", cycle: "annually" });
    expect(sb.sandbox.ledger()).toEqual([expect.objectContaining({ op: "register", type: "cloudlinux", months: 12 })]);
  });

  it("registers a litespeed4 product as litespeed, then change-cores it to litespeed4", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { product_id: "13", ip: "203.0.113.21" });
    await waitFor(async () => upstreamCalls(sb, "change-core").length === 1 && (await bridge.service.services.get(id))?.upstream_variant === "litespeed4");
    const calls = upstreamCalls(sb, "register", "change-core");
    expect(calls.map((c) => [c.op, c.params])).toEqual([
      ["register", { ip: "203.0.113.21", type: "litespeed", billingcycle: 1 }],
      ["change-core", { ip: "203.0.113.21", old_type: "litespeed", new_type: "litespeed4" }],
    ]);
    const svc = (await bridge.service.services.get(id))!;
    expect(svc).toMatchObject({ type: "litespeed", variant: "litespeed4" });
    expect(sb.sandbox.licenses()).toEqual([expect.objectContaining({ ip: "203.0.113.21", type: "litespeed", variant: "litespeed4" })]);
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });

  it("registers a plain litespeed product (14) with no change-core: it is already the variant", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { product_id: "14", ip: "203.0.113.24" });
    await untilIdle(bridge);
    expect(upstreamCalls(sb, "register", "change-core").map((c) => [c.op, c.params])).toEqual([
      ["register", { ip: "203.0.113.24", type: "litespeed", billingcycle: 1 }],
    ]);
    expect(await bridge.service.services.get(id)).toMatchObject({ variant: "litespeed", upstream_variant: "litespeed" });
    expect((await bridge.service.services.history(id)).map((h) => h.action)).not.toContain("variant set");
  });

  it("buys bundle product 20 with a single bundle charge", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { product_id: "20", ip: "203.0.113.22" });
    expect(sb.sandbox.ledger()).toEqual([expect.objectContaining({ op: "bundle", type: "cpanel-cloudlinux", ip: "203.0.113.22" })]);
    expect(upstreamCalls(sb, "register")).toHaveLength(0);
    const svc = (await bridge.service.services.get(id))!;
    expect(svc.bundle_key).toEqual(expect.any(String));
    expect(JSON.parse(svc.companions)).toEqual(["softaculous", "sitepad", "ssl"]);
  });
});

describe("lifecycle: status events", () => {
  const pair = usePair();

  it("suspends upstream on service.suspended", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { ip: "203.0.113.30" });
    expect((await bridge.send(serviceEvent("service.suspended", id))).status).toBe(202);
    await waitStatus(bridge, id, "suspended");
    expect(upstreamCalls(sb, "suspend").map((c) => c.params)).toEqual([{ ip: "203.0.113.30", type: "cpanel" }]);
    expect(sb.sandbox.licenses().find((l) => l.type === "cpanel")?.status).toBe("suspended");
  });

  it("unsuspends upstream on service.unsuspended", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { ip: "203.0.113.31" });
    await bridge.send(serviceEvent("service.suspended", id));
    await waitStatus(bridge, id, "suspended");
    await bridge.send(serviceEvent("service.unsuspended", id));
    await waitStatus(bridge, id, "active");
    expect(upstreamCalls(sb, "unsuspend").map((c) => c.params)).toEqual([{ ip: "203.0.113.31", type: "cpanel" }]);
    expect(sb.sandbox.licenses().every((l) => l.status === "active")).toBe(true);
  });

  it("suspends upstream and marks the service terminated on service.terminated", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { ip: "203.0.113.32" });
    await bridge.send(serviceEvent("service.terminated", id));
    await waitStatus(bridge, id, "terminated");
    expect(upstreamCalls(sb, "suspend").map((c) => c.params)).toEqual([{ ip: "203.0.113.32", type: "cpanel" }]);
    expect(sb.sandbox.licenses().find((l) => l.type === "cpanel")?.status).toBe("suspended");
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });

  it("asks the reseller nothing to suspend again or terminate a suspended service: its native suspension holds the licence", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { ip: "203.0.113.33" });
    await bridge.send(serviceEvent("service.suspended", id));
    await waitStatus(bridge, id, "suspended");
    const before = sb.sandbox.requests().length;

    expect((await bridge.send(serviceEvent("service.suspended", id))).status).toBeLessThan(300);
    await bridge.send(serviceEvent("service.terminated", id));
    await waitStatus(bridge, id, "terminated");
    await untilIdle(bridge);

    expect(sb.sandbox.requests().slice(before)).toEqual([]);
    expect(sb.sandbox.licenses().find((l) => l.type === "cpanel")?.status).toBe("suspended");
  });

  // Contract §2: terminated means "suspend, then never renew it again". A licence the reseller
  // no longer has at that IP leaves nothing to suspend, and the service ends terminated all the
  // same: not active, not renewed, its address free for another service.
  it("marks the service terminated when the reseller no longer has its licence", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { product_id: "19", ip: "203.0.113.33" });
    await untilIdle(bridge);
    await behindTheBridge(sb).changeIp({ ip: "203.0.113.33", newip: "198.51.100.33", type: "plesk" });
    expect((await bridge.send(serviceEvent("service.terminated", id))).status).toBe(202);
    await waitStatus(bridge, id, "terminated");
    const history = await bridge.service.services.history(id);
    expect(history.at(-1)).toMatchObject({ action: "terminated", detail: expect.stringMatching(/no plesk licence for 203\.0\.113\.33/) });
    // The address is free again: another service may order it.
    expect((await bridge.send(createdEvent({ product_id: "19", ip: "203.0.113.33" }))).status).toBe(202);
  });
});

describe("lifecycle: licences that already exist upstream", () => {
  const pair = usePair();

  it("adopts a bundle bought outside the bridge instead of failing or buying it again", async () => {
    const { sb, bridge } = pair();
    const res = await fetch(`${sb.running.apiUrl}/bundles`, {
      method: "POST",
      headers: { authorization: "Bearer sandbox-reseller-token", "content-type": "application/json" },
      body: JSON.stringify({ ip: "203.0.113.60", bundle: "cpanel-cloudlinux", billingcycle: 1 }),
    });
    expect(res.status).toBe(200);
    const id = await orderActive(bridge, { product_id: "20", ip: "203.0.113.60" });
    expect(sb.sandbox.ledger()).toHaveLength(1);
    const svc = (await bridge.service.services.get(id))!;
    expect(svc.bundle_key).toEqual(expect.any(String));
    expect((await bridge.service.services.history(id)).some((h) => h.detail?.includes("adopted it, nothing bought"))).toBe(true);
  });
});

describe("lifecycle: bundles", () => {
  const pair = usePair();

  it("suspends, unsuspends and re-binds every licence of a bundle", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { product_id: "20", ip: "203.0.113.35" });
    await bridge.send(serviceEvent("service.suspended", id));
    await waitStatus(bridge, id, "suspended");
    expect(upstreamCalls(sb, "suspend").map((c) => c.params.type).sort()).toEqual(["cloudlinux", "cpanel"]);
    expect(sb.sandbox.licenses().filter((l) => !l.free).every((l) => l.status === "suspended")).toBe(true);
    await bridge.send(serviceEvent("service.unsuspended", id));
    await waitStatus(bridge, id, "active");
    expect(sb.sandbox.licenses().every((l) => l.status === "active")).toBe(true);
    await bridge.send(serviceEvent("service.ip_changed", id, { changes: { ip: "203.0.113.36" } }));
    await waitFor(async () => (await bridge.service.services.get(id))?.ip === "203.0.113.36", 10_000, "the new IP");
    expect(sb.sandbox.licenses().every((l) => l.ip === "203.0.113.36")).toBe(true);
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });
});

describe("lifecycle: changes", () => {
  const pair = usePair();

  it("re-binds a cpanel licence on service.ip_changed, companions following upstream", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { ip: "203.0.113.40" });
    await bridge.send(serviceEvent("service.ip_changed", id, { changes: { ip: "203.0.113.41" } }));
    await waitFor(async () => (await bridge.service.services.get(id))?.ip === "203.0.113.41", 10_000, "the new IP");
    expect(upstreamCalls(sb, "change-ip").map((c) => c.params)).toEqual([{ ip: "203.0.113.40", newip: "203.0.113.41", type: "cpanel" }]);
    const at = (ip: string) => sb.sandbox.licenses().filter((l) => l.ip === ip).map((l) => l.type).sort();
    expect(at("203.0.113.41")).toEqual(["cpanel", "sitepad", "softaculous", "ssl"]);
    expect(at("203.0.113.40")).toEqual([]);
    expect((await bridge.service.services.get(id))?.status).toBe("active");
  });

  it("moves a litespeed4 licence to litespeed8 on service.product_changed 13 → 15", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { product_id: "13", ip: "203.0.113.42" });
    await waitFor(async () => (await bridge.service.services.get(id))?.upstream_variant === "litespeed4");
    expect((await bridge.send(serviceEvent("service.product_changed", id, { changes: { product_id: "15" } }))).status).toBe(202);
    await waitFor(async () => (await bridge.service.services.get(id))?.variant === "litespeed8", 10_000, "variant litespeed8");
    expect(upstreamCalls(sb, "change-core").map((c) => c.params)).toEqual([
      { ip: "203.0.113.42", old_type: "litespeed", new_type: "litespeed4" },
      { ip: "203.0.113.42", old_type: "litespeed4", new_type: "litespeed8" },
    ]);
    expect(sb.sandbox.licenses()).toEqual([expect.objectContaining({ type: "litespeed", variant: "litespeed8" })]);
    expect((await bridge.service.services.get(id))?.product_id).toBe("15");
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });

  it("moves paid_until one cycle forward on service.renewed", async () => {
    const { bridge } = pair();
    const id = await orderActive(bridge);
    await untilIdle(bridge);
    const before = (await bridge.service.services.get(id))!.paid_until!;
    await bridge.send(serviceEvent("service.renewed", id));
    const after = await waitFor(async () => {
      const p = (await bridge.service.services.get(id))!.paid_until!;
      return p !== before && p;
    });
    expect(after - before).toBeGreaterThanOrEqual(28 * DAY);
    expect(after - before).toBeLessThanOrEqual(31 * DAY);
  });

  it("sets paid_until to service.next_due_date when the panel sends one", async () => {
    const { bridge } = pair();
    const id = await orderActive(bridge);
    await bridge.send(serviceEvent("service.renewed", id, { service: { next_due_date: "2031-06-30" } }));
    await waitFor(async () => (await bridge.service.services.get(id))!.paid_until === Date.parse("2031-06-30"), 10_000, "paid_until 2031-06-30");
    const view = await bridge.admin(`/admin/services/${id}`);
    expect(view.body.paid_until).toBe("2031-06-30T00:00:00.000Z");
  });
});

describe("admin API", () => {
  const pair = usePair();

  it("shows a service with the contract's fields and its history", async () => {
    const { bridge } = pair();
    const id = await orderActive(bridge, { product_id: "13", ip: "203.0.113.50" });
    await untilIdle(bridge);
    const res = await bridge.admin(`/admin/services/${id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      service_id: id,
      ip: "203.0.113.50",
      type: "litespeed",
      variant: "litespeed4",
      status: "active",
      companions: [],
    });
    for (const field of ["expires_at", "paid_until", "last_error", "history"]) expect(res.body).toHaveProperty(field);
    expect(Date.parse(res.body.expires_at as string)).toBeGreaterThan(Date.now() + 27 * DAY);
    expect(Date.parse(res.body.paid_until as string)).not.toBeNaN();
    const history = res.body.history as { action: string; at: string }[];
    expect(history.length).toBeGreaterThanOrEqual(2);
    expect(history[0]!.action).toMatch(/service\.created/);
    expect(history.some((h) => h.action === "registered")).toBe(true);
    expect(Date.parse(history[0]!.at)).not.toBeNaN();
  });

  it("answers 404 for a service it does not know", async () => {
    const { bridge } = pair();
    const res = await bridge.admin("/admin/services/no-such-service");
    expect(res.status).toBe(404);
    expect(res.body.error).toEqual(expect.any(String));
  });

  it("lists licences filtered by status, without history", async () => {
    const { bridge } = pair();
    const a = await orderActive(bridge, { ip: "203.0.113.51" });
    const b = await orderActive(bridge, { ip: "203.0.113.52" });
    await bridge.send(serviceEvent("service.suspended", b));
    await waitStatus(bridge, b, "suspended");
    const active = await bridge.admin("/admin/licenses?status=active");
    expect(active.status).toBe(200);
    const items = active.body.licenses as Record<string, unknown>[];
    expect(items.map((l) => l.service_id)).toEqual([a]);
    expect(items[0]).toMatchObject({ service_id: a, ip: "203.0.113.51", type: "cpanel", status: "active" });
    expect(items[0]).not.toHaveProperty("history");
    const all = await bridge.admin("/admin/licenses");
    expect((all.body.licenses as { service_id: string }[]).map((l) => l.service_id).sort()).toEqual([a, b].sort());
    expect((await bridge.admin("/admin/licenses?status=suspended")).body.licenses).toEqual([expect.objectContaining({ service_id: b })]);
  });

  it("lists jobs filtered by state and service id", async () => {
    const { bridge } = pair();
    const a = await orderActive(bridge, { ip: "203.0.113.53" });
    const b = await orderActive(bridge, { ip: "203.0.113.54" });
    await untilIdle(bridge);
    const res = await bridge.admin(`/admin/jobs?state=succeeded&service_id=${a}`);
    expect(res.status).toBe(200);
    const jobs = res.body.jobs as Record<string, unknown>[];
    expect(jobs).toContainEqual(expect.objectContaining({ kind: "register", service_id: a, state: "succeeded" }));
    expect(jobs.every((j) => j.service_id === a && j.state === "succeeded")).toBe(true);
    for (const field of ["id", "kind", "service_id", "state", "attempts", "last_error", "run_at"]) expect(jobs[0]).toHaveProperty(field);
    expect(Date.parse(jobs[0]!.run_at as string)).not.toBeNaN();
    const ofB = (await bridge.admin(`/admin/jobs?service_id=${b}`)).body.jobs as { service_id: string }[];
    expect(ofB.length).toBeGreaterThan(0);
    expect(ofB.every((j) => j.service_id === b)).toBe(true);
    const queued = (await bridge.admin("/admin/jobs?state=queued")).body.jobs;
    expect(queued).toEqual([]);
  });

  it("answers 401 without the bearer token, or with a wrong one", async () => {
    const { bridge } = pair();
    for (const path of ["/admin/licenses", "/admin/jobs", "/admin/services/x"]) {
      expect((await fetch(`${bridge.url}${path}`)).status, path).toBe(401);
      const wrong = await fetch(`${bridge.url}${path}`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}x` } });
      expect(wrong.status, path).toBe(401);
    }
    expect((await fetch(`${bridge.url}/admin/jobs/1/retry`, { method: "POST" })).status).toBe(401);
  });

  it("retries a blocked job with 202", async () => {
    const { sb, bridge } = pair();
    sb.sandbox.setBalance(0);
    const event = createdEvent();
    await bridge.send(event);
    const [job] = await waitFor(async () => {
      const jobs = await bridge.service.queue.list({ state: "blocked", serviceId: event.service.id });
      return jobs.length > 0 && jobs;
    });
    const res = await bridge.admin(`/admin/jobs/${job!.id}/retry`, { method: "POST" });
    expect(res.status).toBe(202);
  });

  it("retries a failed job with 202", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge);
    await untilIdle(bridge);
    sb.sandbox.reset(); // the licence vanishes upstream: suspending it fails for good
    await bridge.send(serviceEvent("service.suspended", id));
    const [job] = await waitFor(async () => {
      const jobs = await bridge.service.queue.list({ state: "failed", serviceId: id, kind: "suspend" });
      return jobs.length > 0 && jobs;
    });
    expect(job!.lastError).toMatch(/no cpanel licence/);
    const res = await bridge.admin(`/admin/jobs/${job!.id}/retry`, { method: "POST" });
    expect(res.status).toBe(202);
  });

  it("refuses to retry a succeeded job with 409, and an unknown one with 404", async () => {
    const { bridge } = pair();
    const id = await orderActive(bridge);
    await untilIdle(bridge);
    const [job] = await bridge.service.queue.list({ state: "succeeded", serviceId: id, kind: "register" });
    expect((await bridge.admin(`/admin/jobs/${job!.id}/retry`, { method: "POST" })).status).toBe(409);
    expect((await bridge.admin("/admin/jobs/999999/retry", { method: "POST" })).status).toBe(404);
    // Had the refusal requeued it, the job would have run again by the time the queue is idle: attempts and times would differ.
    await untilIdle(bridge);
    expect(await bridge.service.queue.get(job!.id)).toEqual(job);
  });
});
