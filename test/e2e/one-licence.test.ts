import { describe, expect, it } from "vitest";
import { createdEvent, serviceEvent, uniqueIp } from "../helpers/bridge.js";
import { orderActive, untilIdle, upstreamCalls, usePair, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";

/** service-contract.md section 2: one licence, one service; one address, one spelling. */

describe("one licence, one service", () => {
  const pair = usePair();

  it("refuses a second service for an IP and type another service holds, naming it, and buys nothing", async () => {
    const { sb, bridge } = pair();
    const first = await orderActive(bridge, { product_id: "12", ip: "203.0.113.40" });
    const res = await bridge.send(createdEvent({ product_id: "12", ip: "203.0.113.40" }));
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ "service.ip": [expect.stringContaining(`service ${first}`)] });
    await untilIdle(bridge);
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });

  it("lets another type share the address, but not a licence inside a bundle", async () => {
    const { bridge } = pair();
    await orderActive(bridge, { product_id: "20", ip: "203.0.113.41" }); // cpanel-cloudlinux bundle
    expect((await bridge.send(createdEvent({ product_id: "15", ip: "203.0.113.41" }))).status).toBe(202); // imunify360
    const clash = await bridge.send(createdEvent({ product_id: "17", ip: "203.0.113.41" })); // cloudlinux
    expect(clash.status).toBe(422);
    expect(clash.body.errors).toEqual({ "service.ip": [expect.stringMatching(/cloudlinux licence held by service/)] });
  });

  it("refuses an IP change onto another service's licence, and onto the target of its queued IP change", async () => {
    const { bridge } = pair();
    const a = await orderActive(bridge, { product_id: "12", ip: "203.0.113.42" });
    const b = await orderActive(bridge, { product_id: "12", ip: "203.0.113.43" });
    const onto = await bridge.send(serviceEvent("service.ip_changed", b, { changes: { ip: "203.0.113.42" } }));
    expect(onto.status).toBe(422);
    expect(onto.body.errors).toEqual({ "changes.ip": [expect.stringContaining(`service ${a}`)] });

    await bridge.service.runner.stop(0);
    expect((await bridge.send(serviceEvent("service.ip_changed", a, { changes: { ip: "203.0.113.44" } }))).status).toBe(202);
    const ontoQueued = await bridge.send(serviceEvent("service.ip_changed", b, { changes: { ip: "203.0.113.44" } }));
    expect(ontoQueued.status).toBe(422);
    expect(ontoQueued.body.errors).toEqual({ "changes.ip": [expect.stringContaining(`service ${a}`)] });
  });

  it("frees the licence once its service is terminated: a new service adopts it, unsuspended, buying nothing", async () => {
    const { sb, bridge } = pair();
    const old = await orderActive(bridge, { product_id: "12", ip: "203.0.113.45" });
    await bridge.send(serviceEvent("service.terminated", old));
    await waitStatus(bridge, old, "terminated");
    const next = await orderActive(bridge, { product_id: "12", ip: "203.0.113.45" });
    await untilIdle(bridge);
    expect(sb.sandbox.ledger().filter((c) => c.op === "register")).toHaveLength(1);
    expect(sb.sandbox.licenses().find((l) => l.type === "cpanel")?.status).toBe("active");
    // Terminating the old service again touches nothing of the new one.
    expect((await bridge.send(serviceEvent("service.terminated", old))).status).toBe(202);
    await untilIdle(bridge);
    expect(sb.sandbox.licenses().find((l) => l.type === "cpanel")?.status).toBe("active");
    expect((await bridge.service.services.get(next))?.status).toBe("active");
  });
});

describe("one address, one spelling", () => {
  const pair = usePair();

  it("stores and sends an IPv6 address compressed and lower-case, and refuses its other spellings for a second service", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { ip: "2001:DB8:0:0:0:0:0:1" });
    expect((await bridge.service.services.get(id))?.ip).toBe("2001:db8::1");
    expect(upstreamCalls(sb, "register").map((c) => c.params.ip)).toEqual(["2001:db8::1"]);
    expect((await bridge.admin(`/admin/services/${id}`)).body.ip).toBe("2001:db8::1");
    for (const spelling of ["2001:db8::1", "2001:0db8::0001", "2001:db8:0::0:1"]) {
      const res = await bridge.send(createdEvent({ ip: spelling }));
      expect(res.status, spelling).toBe(422);
    }
  });

  it("treats an IPv4-mapped IPv6 address as its IPv4 address", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { ip: "::ffff:203.0.113.9" });
    expect((await bridge.service.services.get(id))?.ip).toBe("203.0.113.9");
    expect(upstreamCalls(sb, "register").map((c) => c.params.ip)).toEqual(["203.0.113.9"]);
    expect((await bridge.send(createdEvent({ ip: "203.0.113.9" }))).status).toBe(422);
    expect((await bridge.send(createdEvent({ ip: "::FFFF:CB00:7109" }))).status).toBe(422);
  });

  it("canonicalises the new IP of an IP change, so a spelling of the current IP is no change", async () => {
    const { bridge } = pair();
    const id = await orderActive(bridge, { ip: "2001:db8::5" });
    const res = await bridge.send(serviceEvent("service.ip_changed", id, { changes: { ip: "2001:0DB8::5" } }));
    // Nothing to do (the same answer the provisioning API gives): recorded, no job, no IP change counted.
    expect(res.status).toBe(202);
    await untilIdle(bridge);
    expect(await bridge.service.services.get(id)).toMatchObject({ ip: "2001:db8::5", ip_changes: 0 });
    expect((await bridge.service.queue.list({ serviceId: id })).map((j) => j.kind)).not.toContain("change_ip");
  });
});

describe("unusable addresses", () => {
  const pair = usePair();
  const UNUSABLE = [
    "0.0.0.0",
    "0.1.2.3",
    "127.0.0.1",
    "169.254.10.1",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "fe80::1",
    "ff02::1",
    "100::1",
    // IETF protocol assignments and 6to4, in both families alike (issue 21 item 5).
    "192.0.0.1",
    "2001:5::1",
    "192.88.99.1",
    "2002:c058:6301::1",
  ];
  const PRIVATE = ["10.0.0.1", "172.16.5.4", "192.168.1.1", "100.64.0.1", "fc00::1", "fd12:3456::1"];

  it("refuses each unusable class for a new service, naming service.ip", async () => {
    const { sb, bridge } = pair();
    for (const ip of [...UNUSABLE, ...PRIVATE]) {
      const res = await bridge.send(createdEvent({ ip }));
      expect(res.status, ip).toBe(422);
      expect(Object.keys(res.body.errors as object), ip).toEqual(["service.ip"]);
    }
    await untilIdle(bridge);
    expect(await bridge.service.services.list()).toEqual([]);
    expect(sb.sandbox.requests()).toEqual([]);
  });

  it("refuses them as the new IP of an IP change, naming changes.ip", async () => {
    const { bridge } = pair();
    const id = await orderActive(bridge);
    for (const ip of ["127.0.0.1", "::1", "10.1.1.1", "255.255.255.255"]) {
      const res = await bridge.send(serviceEvent("service.ip_changed", id, { changes: { ip } }));
      expect(res.status, ip).toBe(422);
      expect(Object.keys(res.body.errors as object), ip).toEqual(["changes.ip"]);
    }
  });

  it("accepts the documentation and benchmarking ranges", async () => {
    const { bridge } = pair();
    for (const ip of ["192.0.2.7", "198.51.100.7", "203.0.113.7", "198.19.255.7", "2001:db8::7", "3fff::7", "2001:2::7", "2a00:1450::7"]) {
      expect((await bridge.send(createdEvent({ ip }))).status, ip).toBe(202);
    }
  });
});

describe("ALLOW_PRIVATE_IPS=true", () => {
  const pair = usePair({ env: { ALLOW_PRIVATE_IPS: "true" } });

  it("lets licences bind to private addresses, and still refuses loopback", async () => {
    const { bridge } = pair();
    for (const ip of ["10.0.0.1", "172.16.5.4", "192.168.1.1", "100.64.0.1", "fd00::1"]) {
      expect((await bridge.send(createdEvent({ ip }))).status, ip).toBe(202);
    }
    expect((await bridge.send(createdEvent({ ip: "127.0.0.1" }))).status).toBe(422);
  });
});

describe("rules against the IP the service will have", () => {
  const pair = usePair();

  it("accepts an IP change and its reversal sent in quick succession, and applies both in order", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { ip: "203.0.113.50" });
    const there = await bridge.send(serviceEvent("service.ip_changed", id, { service: { ip: "203.0.113.50" }, changes: { ip: "203.0.113.51" } }));
    const back = await bridge.send(serviceEvent("service.ip_changed", id, { service: { ip: "203.0.113.51" }, changes: { ip: "203.0.113.50" } }));
    expect([there.status, back.status]).toEqual([202, 202]);
    await untilIdle(bridge);
    expect((await bridge.service.services.get(id))?.ip).toBe("203.0.113.50");
    expect(upstreamCalls(sb, "change-ip").map((c) => [c.params.ip, c.params.newip])).toEqual([
      ["203.0.113.50", "203.0.113.51"],
      ["203.0.113.51", "203.0.113.50"],
    ]);
    expect(sb.sandbox.licenses().find((l) => l.type === "cpanel")?.ip).toBe("203.0.113.50");
  });

  it("takes a change to the IP a queued change will already leave as nothing to do: no second job, no second IP change counted", async () => {
    const { bridge } = pair();
    const id = await orderActive(bridge, { ip: "203.0.113.52" });
    await bridge.service.runner.stop(0);
    expect((await bridge.send(serviceEvent("service.ip_changed", id, { changes: { ip: "203.0.113.53" } }))).status).toBe(202);
    expect((await bridge.send(serviceEvent("service.ip_changed", id, { changes: { ip: "203.0.113.53" } }))).status).toBe(202);
    expect((await bridge.service.queue.list({ serviceId: id, kind: "change_ip" })).length).toBe(1);
    expect((await bridge.service.services.get(id))?.ip_changes).toBe(1);
  });
});

describe("terminated services", () => {
  const pair = usePair();

  it("ordered again: the licence is unsuspended, the service active again and the install mail sent, nothing bought", async () => {
    const { sb, bridge } = pair();
    const order = createdEvent({ ip: uniqueIp() });
    await bridge.send(order);
    await waitStatus(bridge, order.service.id, "active");
    await bridge.send(serviceEvent("service.terminated", order.service.id));
    await waitStatus(bridge, order.service.id, "terminated");
    expect(sb.sandbox.licenses().find((l) => l.type === "cpanel")?.status).toBe("suspended");

    expect((await bridge.send(order)).status).toBe(202); // the same order, a new webhook-id
    await waitStatus(bridge, order.service.id, "active");
    await untilIdle(bridge);
    expect(sb.sandbox.ledger().filter((c) => c.op === "register")).toHaveLength(1);
    expect(upstreamCalls(sb, "register")).toHaveLength(1);
    expect(upstreamCalls(sb, "unsuspend")).toHaveLength(1);
    expect(sb.sandbox.licenses().find((l) => l.type === "cpanel")?.status).toBe("active");
    expect(await bridge.service.queue.list({ serviceId: order.service.id, kind: "mail_install" })).toHaveLength(2);
  });

  it("ordered again when the reseller no longer has the licence: it is registered anew", async () => {
    const { sb, bridge } = pair();
    const order = createdEvent({ ip: uniqueIp() });
    await bridge.send(order);
    await waitStatus(bridge, order.service.id, "active");
    await bridge.send(serviceEvent("service.terminated", order.service.id));
    await waitStatus(bridge, order.service.id, "terminated");
    sb.sandbox.reset();
    await bridge.send(order);
    await waitStatus(bridge, order.service.id, "active");
    expect(sb.sandbox.ledger().map((c) => c.op)).toEqual(["register"]);
  });

  it("refuses every other event with 422 saying it is terminated; a repeated termination is accepted and does nothing", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge);
    await bridge.send(serviceEvent("service.terminated", id));
    await waitStatus(bridge, id, "terminated");
    const calls = sb.sandbox.requests().length;
    for (const [type, extra] of [
      ["service.unsuspended", {}],
      ["service.suspended", {}],
      ["service.renewed", {}],
      ["service.ip_changed", { changes: { ip: uniqueIp() } }],
      ["service.product_changed", { changes: { product_id: "13" } }],
    ] as const) {
      const res = await bridge.send(serviceEvent(type, id, extra));
      expect(res.status, type).toBe(422);
      expect(res.body.errors, type).toEqual({ "service.id": [expect.stringContaining("is terminated")] });
    }
    expect((await bridge.send(serviceEvent("service.terminated", id))).status).toBe(202);
    await untilIdle(bridge);
    expect(sb.sandbox.requests()).toHaveLength(calls);
    expect(await bridge.service.queue.list({ serviceId: id, kind: "terminate" })).toHaveLength(1);
  });

  // Contract §2: events of a service are applied in the order received, and an order for a
  // terminated service starts it again. One that comes while the termination is still queued is
  // accepted and applied after it: the licence is suspended, then unsuspended, nothing bought.
  it("an order sent while the termination is still being applied is accepted and starts the service again after it", async () => {
    const { sb, bridge } = pair();
    const order = createdEvent();
    const id = order.service.id;
    await bridge.send(order);
    await waitStatus(bridge, id, "active");
    await untilIdle(bridge);
    await bridge.service.runner.stop(0);
    expect((await bridge.send(serviceEvent("service.terminated", id))).status).toBe(202);
    const again = await bridge.send({ ...order, service: { ...order.service, customer: { email: "again@example.com" } } });
    expect(again.status).toBe(202);
    // Nothing of the new order is written before the termination has run on the row as it was.
    expect((await bridge.service.services.get(id))?.customer_email).toBe(order.service.customer!.email);
    await bridge.service.runner.start();
    await waitFor(async () => (await bridge.service.services.history(id)).some((h) => h.action === "ordered again"), 10_000, "the order to be applied");
    await waitStatus(bridge, id, "active");
    await untilIdle(bridge);
    expect(upstreamCalls(sb, "register", "suspend", "unsuspend").map((r) => r.op)).toEqual(["register", "suspend", "unsuspend"]);
    expect(sb.sandbox.ledger()).toHaveLength(1);
    const svc = await bridge.service.services.get(id);
    expect(svc?.customer_email).toBe("again@example.com");
    const actions = (await bridge.service.services.history(id)).map((h) => h.action);
    expect(actions.indexOf("terminated")).toBeLessThan(actions.indexOf("ordered again"));
  });
});

describe("an old registration retried after its service was ordered again", () => {
  const pair = usePair({ env: { JOB_MAX_ATTEMPTS: "1" } });

  it("buys and mails nothing", async () => {
    const { sb, bridge } = pair();
    sb.sandbox.setFaults({ failNext: 1 });
    const order = createdEvent();
    await bridge.send(order);
    await waitStatus(bridge, order.service.id, "failed");
    const [old] = await bridge.service.queue.list({ serviceId: order.service.id, kind: "register", state: "failed" });

    // The panel sends the order again; it is bought and mailed once.
    await bridge.send(order);
    await waitStatus(bridge, order.service.id, "active");
    await untilIdle(bridge);
    const mails = async () => (await bridge.service.queue.list({ serviceId: order.service.id, kind: "mail_install" })).length;
    expect(await mails()).toBe(1);

    // Then an operator retries the old, failed job.
    expect((await bridge.service.queue.retry(old!.id))?.state).toBe("queued");
    await waitFor(async () => (await bridge.service.queue.get(old!.id))?.state === "succeeded");
    await untilIdle(bridge);
    expect(await mails()).toBe(1);
    expect(sb.sandbox.ledger().filter((c) => c.op === "register")).toHaveLength(1);
    expect((await bridge.service.services.history(order.service.id)).at(-1)).toMatchObject({ action: "registration skipped", detail: expect.stringContaining("superseded") });
  });
});
