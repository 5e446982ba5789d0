import { describe, expect, it } from "vitest";
import { createdEvent, serviceEvent, TEST_SECRET, uniqueId } from "../helpers/bridge.js";
import {
  OTHER_SECRET,
  orderActive,
  rawPost,
  rowCounts,
  untilIdle,
  signedHeaders,
  upstreamCalls,
  usePair,
  waitStatus,
} from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";

describe("webhook intake: acceptance and idempotency", () => {
  const pair = usePair();

  it("answers 202 with an event id and stores the event with its job", async () => {
    const { bridge } = pair();
    const event = createdEvent();
    const res = await bridge.send(event);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: "accepted", event_id: expect.any(String) });
    expect((await bridge.service.store.counts()).events).toBe(1);
    const received = (await bridge.service.services.history(event.service.id)).filter((h) => h.action.startsWith("received "));
    expect(received.map((h) => h.event_id)).toEqual([res.body.event_id]);
    expect(await bridge.service.queue.list({ kind: "register" })).toHaveLength(1);
  });

  it("answers the same webhook-id again with 200 duplicate and creates no job or charge", async () => {
    const { sb, bridge } = pair();
    const event = createdEvent();
    const id = uniqueId();
    const first = await bridge.send(event, { id });
    await waitStatus(bridge, event.service.id, "active");
    await untilIdle(bridge);
    const before = await rowCounts(bridge);
    const again = await bridge.send(event, { id });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ event_id: first.body.event_id, status: "duplicate" });
    // The answer comes after whatever the delivery wrote: once the queue is idle, a job it queued has charged.
    await untilIdle(bridge);
    expect(await rowCounts(bridge)).toEqual(before);
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });

  it("accepts exactly one of 8 concurrent copies of an event and buys one licence", async () => {
    const { sb, bridge } = pair();
    const event = createdEvent();
    const id = uniqueId();
    const answers = await Promise.all(Array.from({ length: 8 }, () => bridge.send(event, { id })));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 202]);
    expect(new Set(answers.map((a) => a.body.event_id)).size).toBe(1);
    await waitStatus(bridge, event.service.id, "active");
    await untilIdle(bridge);
    expect(sb.sandbox.ledger()).toHaveLength(1);
    expect((await rowCounts(bridge)).events).toBe(1);
  });

  it("records a second service.created for a known service under a new webhook-id but buys nothing", async () => {
    const { sb, bridge } = pair();
    const event = createdEvent();
    await bridge.send(event);
    await waitStatus(bridge, event.service.id, "active");
    const res = await bridge.send(event);
    expect(res.status).toBe(202);
    // The answer comes after the event row and any job it queued: once the queue is idle, nothing more can charge.
    await untilIdle(bridge);
    expect(sb.sandbox.ledger()).toHaveLength(1);
    expect(upstreamCalls(sb, "register")).toHaveLength(1);
    expect((await bridge.service.store.counts()).events).toBe(2);
    const received = (await bridge.service.services.history(event.service.id)).filter((h) => h.action === "received service.created");
    expect(received.map((h) => h.event_id)).toEqual([expect.any(String), res.body.event_id]);
    expect(await bridge.service.store.events.get(String(res.body.event_id))).toMatchObject({ id: res.body.event_id, outcome: "ignored" });
    expect((await bridge.service.services.get(event.service.id))?.status).toBe("active");
  });
});

describe("webhook intake: authentication", () => {
  const pair = usePair();

  const expectNothingStored = async (bridge: Parameters<typeof rowCounts>[0]) => expect(await rowCounts(bridge)).toEqual({ events: 0, jobs: 0 });

  it("rejects a bad signature with 401", async () => {
    const { bridge } = pair();
    const res = await bridge.send(createdEvent(), { headers: { "webhook-signature": "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" } });
    expect(res.status).toBe(401);
    expect(res.body.error).toEqual(expect.any(String));
    await expectNothingStored(bridge);
  });

  it("rejects a signed delivery re-sent under another webhook-id with 401: the id is signed, so it cannot make a copy new", async () => {
    const { bridge } = pair();
    const event = createdEvent();
    const body = JSON.stringify(event);
    const headers = signedHeaders(body);
    expect((await rawPost(bridge.url, headers, body)).status).toBe(202);
    await waitStatus(bridge, event.service.id, "active");
    await untilIdle(bridge);
    const before = await rowCounts(bridge);
    const renamed = await rawPost(bridge.url, { ...headers, "webhook-id": uniqueId() }, body);
    expect(renamed.status).toBe(401);
    expect(await rowCounts(bridge)).toEqual(before);
  });

  it("rejects a body signed by an unknown secret with 401", async () => {
    const { bridge } = pair();
    const res = await bridge.send(createdEvent(), { secret: OTHER_SECRET });
    expect(res.status).toBe(401);
    await expectNothingStored(bridge);
  });

  it("rejects a request without the signature headers with 401", async () => {
    const { bridge } = pair();
    const body = JSON.stringify(createdEvent());
    const res = await rawPost(bridge.url, { "content-type": "application/json" }, body);
    expect(res.status).toBe(401);
    expect(res.body.error).toEqual(expect.any(String));
    for (const missing of ["webhook-id", "webhook-timestamp", "webhook-signature"]) {
      const headers = signedHeaders(body);
      delete headers[missing];
      expect((await rawPost(bridge.url, headers, body)).status, `without ${missing}`).toBe(401);
    }
    await expectNothingStored(bridge);
  });

  it("rejects a timestamp 6 minutes old with 401", async () => {
    const { bridge } = pair();
    const res = await bridge.send(createdEvent(), { nowMs: Date.now() - 6 * 60_000 });
    expect(res.status).toBe(401);
    await expectNothingStored(bridge);
  });

  it("rejects a timestamp 6 minutes ahead with 401", async () => {
    const { bridge } = pair();
    const res = await bridge.send(createdEvent(), { nowMs: Date.now() + 6 * 60_000 });
    expect(res.status).toBe(401);
    await expectNothingStored(bridge);
  });

  it("accepts a timestamp 4 minutes off either way", async () => {
    const { bridge } = pair();
    expect((await bridge.send(createdEvent(), { nowMs: Date.now() - 4 * 60_000 })).status).toBe(202);
    expect((await bridge.send(createdEvent(), { nowMs: Date.now() + 4 * 60_000 })).status).toBe(202);
  });
});

describe("webhook intake: secret rotation", () => {
  const pair = usePair({ env: { WEBHOOK_SECRETS: `${TEST_SECRET},${OTHER_SECRET}` } });

  it("accepts a signature by the second of two configured secrets", async () => {
    const { bridge } = pair();
    expect((await bridge.send(createdEvent(), { secret: OTHER_SECRET })).status).toBe(202);
    expect((await bridge.send(createdEvent(), { secret: TEST_SECRET })).status).toBe(202);
  });

  it("accepts a signature header carrying several entries when one matches", async () => {
    const { bridge } = pair();
    const body = JSON.stringify(createdEvent());
    const headers = signedHeaders(body, { secret: OTHER_SECRET });
    headers["webhook-signature"] = `v1,bm9wZQ== ${headers["webhook-signature"]}`;
    expect((await rawPost(bridge.url, headers, body)).status).toBe(202);
  });
});

describe("webhook intake: malformed requests", () => {
  const pair = usePair();

  it("answers a signed body that is not JSON with 400", async () => {
    const { bridge } = pair();
    const res = await bridge.send(undefined, { rawBody: '{"type": "service.created", ' });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual(expect.any(String));
    expect(await rowCounts(bridge)).toEqual({ events: 0, jobs: 0 });
  });

  it("answers a wrong content type with 415", async () => {
    const { bridge } = pair();
    const res = await bridge.send(createdEvent(), { headers: { "content-type": "text/plain" } });
    expect(res.status).toBe(415);
    expect(res.body.error).toEqual(expect.any(String));
    expect(await rowCounts(bridge)).toEqual({ events: 0, jobs: 0 });
  });

  it("answers a body over 64 KiB with 413, naming that limit", async () => {
    const { bridge } = pair();
    const event = { ...createdEvent(), padding: "x".repeat(65 * 1024) };
    const res = await bridge.send(event);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: "Request body too large (64 KiB at most)", code: "payload_too_large" });
    expect(await rowCounts(bridge)).toEqual({ events: 0, jobs: 0 });
  });
});

describe("webhook intake: validation (422) and unknown services (409)", () => {
  const pair = usePair();

  async function expectRejected(send: Promise<{ status: number; body: Record<string, unknown> }>, status: number, bridge: Parameters<typeof rowCounts>[0]) {
    const before = await rowCounts(bridge);
    const res = await send;
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(await rowCounts(bridge)).toEqual(before);
    return res.body;
  }

  it("rejects an unknown product with errors[service.product_id]", async () => {
    const { bridge } = pair();
    const body = await expectRejected(bridge.send(createdEvent({ product_id: "999" })), 422, bridge);
    expect(body.error).toBe("Validation error");
    expect((body.errors as Record<string, string[]>)["service.product_id"]).toEqual([expect.stringContaining("999")]);
  });

  it("rejects a bad IP with errors[service.ip]", async () => {
    const { bridge } = pair();
    const body = await expectRejected(bridge.send(createdEvent({ ip: "203.0.113.300" })), 422, bridge);
    expect(body.errors).toHaveProperty(["service.ip"]);
  });

  it("rejects an unknown event type with errors[type]", async () => {
    const { bridge } = pair();
    const event = { ...createdEvent(), type: "service.exploded" };
    const body = await expectRejected(bridge.send(event), 422, bridge);
    expect(body.error).toBe("Validation error");
    expect(body.errors).toHaveProperty(["type"]);
  });

  it("rejects service.ip_changed without changes.ip with errors[changes.ip]", async () => {
    const { bridge } = pair();
    const id = await orderActive(bridge);
    await untilIdle(bridge);
    const body = await expectRejected(bridge.send(serviceEvent("service.ip_changed", id)), 422, bridge);
    expect(body.errors).toHaveProperty(["changes.ip"]);
  });

  it("rejects service.product_changed to a non-LiteSpeed product with errors[changes.product_id]", async () => {
    const { bridge } = pair();
    const id = await orderActive(bridge, { product_id: "13" });
    await untilIdle(bridge);
    const body = await expectRejected(
      bridge.send(serviceEvent("service.product_changed", id, { changes: { product_id: "12" } })),
      422,
      bridge,
    );
    expect(body.errors).toHaveProperty(["changes.product_id"]);
  });

  it.each([
    ["service.renewed", {}],
    ["service.suspended", {}],
    ["service.unsuspended", {}],
    ["service.terminated", {}],
    ["service.ip_changed", { changes: { ip: "203.0.113.99" } }],
    ["service.product_changed", { changes: { product_id: "15" } }],
  ])("answers %s for a service it has never seen with 409 and stores nothing", async (type, extra) => {
    const { bridge } = pair();
    const body = await expectRejected(bridge.send(serviceEvent(type, "never-seen-1", extra)), 409, bridge);
    expect(body).toEqual({ error: "unknown service", code: "unknown_service" });
    expect((await bridge.service.store.counts()).events).toBe(0);
  });

  it("delivers a 409'd event once the service exists (the panel's retry)", async () => {
    const { bridge } = pair();
    const event = createdEvent();
    const suspend = serviceEvent("service.suspended", event.service.id);
    const id = uniqueId();
    expect((await bridge.send(suspend, { id })).status).toBe(409);
    expect((await bridge.send(event)).status).toBe(202);
    expect((await bridge.send(suspend, { id })).status).toBe(202);
    await waitStatus(bridge, event.service.id, "suspended");
  });

  it("rejects the 4th IP change of product 13 (max_ip_changes 3) with 422 naming the limit", async () => {
    const { bridge } = pair();
    const id = await orderActive(bridge, { product_id: "13", ip: "198.51.100.1" });
    for (let i = 2; i <= 4; i++) {
      const res = await bridge.send(serviceEvent("service.ip_changed", id, { changes: { ip: `198.51.100.${i}` } }));
      expect(res.status, `change ${i - 1}`).toBe(202);
    }
    await waitFor(async () => (await bridge.service.services.get(id))?.ip === "198.51.100.4");
    await untilIdle(bridge);
    const body = await expectRejected(bridge.send(serviceEvent("service.ip_changed", id, { changes: { ip: "198.51.100.5" } })), 422, bridge);
    const messages = (body.errors as Record<string, string[]>)["changes.ip"] ?? [];
    expect(messages.join(" ")).toMatch(/\b3\b/);
    expect(messages.join(" ")).toMatch(/max_ip_changes|limit/i);
  });

  it("rejects a date that does not exist (2026-02-31) with errors[service.next_due_date], rather than reading it as 3 March", async () => {
    const { bridge } = pair();
    for (const date of ["2026-02-31", "2026-04-31", "2025-02-29", "2026-02-31T10:00:00Z"]) {
      const body = await expectRejected(bridge.send(createdEvent({ next_due_date: date })), 422, bridge);
      expect(body.errors, date).toEqual({ "service.next_due_date": ["is not a real date"] });
    }
    expect((await bridge.send(createdEvent({ next_due_date: "2028-02-29" }))).status).toBe(202);
  });

  it("rejects a control character (NUL, ESC, CR) in the customer's name, which would reach the mail", async () => {
    const { bridge } = pair();
    for (const name of ["Ann\u0000Example", "Ann\u001b[31m", "Ann\r\nBcc: x@example.com"]) {
      const event = createdEvent();
      event.service.customer.name = name;
      const body = await expectRejected(bridge.send(event), 422, bridge);
      expect(body.errors, JSON.stringify(name)).toEqual({ "service.customer.name": ["must not contain control characters"] });
    }
  });
});
