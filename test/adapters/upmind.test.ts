import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { untilIdle, upstreamCalls, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { freshIp, numericId, UPMIND_SECRET, upmindHeaders, useAdapterHarness, type AdapterHarness } from "./helpers.js";

interface ContractProduct {
  id: string;
  product_id: string;
  billing_cycle_months: number;
  ip: string;
  next_due_date: string;
  client: { email: string; full_name: string };
}

function contractProduct(over: Partial<ContractProduct> = {}): ContractProduct {
  return {
    id: over.id ?? `cp-${numericId()}`,
    product_id: over.product_id ?? "12",
    billing_cycle_months: over.billing_cycle_months ?? 1,
    ip: over.ip ?? freshIp(),
    next_due_date: over.next_due_date ?? "2026-03-01 00:00:00",
    client: over.client ?? { email: "bob@example.com", full_name: "Bob Example" },
  };
}

/** A V1 Upmind payload: the documented envelope around a contract product. */
function payload(hook: string, object: ContractProduct, id = randomUUID()) {
  return {
    webhook_event_id: id,
    event_datetime: "2026-01-15 10:00:00",
    version: "V1",
    hook_category: "contract",
    hook_code: `${hook}_hook`,
    hook_log_id: randomUUID(),
    object_type: "contract_product",
    object_id: object.id,
    object,
    actor_type: "system",
    actor_id: null,
    brand_id: randomUUID(),
  };
}

async function send(h: AdapterHarness, body: unknown, o: Parameters<typeof upmindHeaders>[1] = {}) {
  const raw = JSON.stringify(body);
  return h.post("/webhooks/upmind", raw, upmindHeaders(raw, o));
}

async function activated(h: AdapterHarness, over: Partial<ContractProduct> = {}) {
  const cp = contractProduct(over);
  const res = await send(h, payload("contract_product_activated", cp));
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  await waitStatus(h.bridge, cp.id, "active");
  return cp;
}

describe("Upmind adapter", () => {
  const harness = useAdapterHarness({ UPMIND_WEBHOOK_SECRET: UPMIND_SECRET });

  it.each([[null], [[]], [7]])("answers a signed body that is valid JSON but no object (%j) with 422 naming the body, as every way in does", async (body) => {
    const res = await send(harness(), body);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: "validation", errors: { "(body)": ["must be a JSON object"] } });
  });

  it("accepts a hex-signed contract_product_activated (202), registers the licence and is charged once", async () => {
    const h = harness();
    const cp = contractProduct({ billing_cycle_months: 12 });
    const res = await send(h, payload("contract_product_activated", cp));
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ event_id: expect.any(String), status: "accepted" });
    await waitStatus(h.bridge, cp.id, "active");
    expect(upstreamCalls(h.sb, "register").filter((c) => c.params.ip === cp.ip).map((c) => c.params)).toEqual([
      { ip: cp.ip, type: "cpanel", billingcycle: 12 },
    ]);
    expect(h.sb.sandbox.ledger().filter((c) => c.ip === cp.ip)).toEqual([expect.objectContaining({ op: "register", months: 12 })]);
    expect(await h.bridge.service.services.get(cp.id)).toMatchObject({
      customer_email: "bob@example.com",
      billing_cycle: "annually",
      paid_until: Date.parse("2026-03-01T00:00:00Z"),
    });
  });

  it("accepts a base64 signature too, and suspends upstream on contract_product_suspended", async () => {
    const h = harness();
    const cp = await activated(h);
    const res = await send(h, payload("contract_product_suspended", cp), { encoding: "base64" });
    expect(res.status).toBe(202);
    await waitStatus(h.bridge, cp.id, "suspended");
    expect(upstreamCalls(h.sb, "suspend").filter((c) => c.params.ip === cp.ip).map((c) => c.params)).toEqual([{ ip: cp.ip, type: "cpanel" }]);
  });

  it("turns contract_product_updated with a new IP into change-ip (compared with the stored licence)", async () => {
    const h = harness();
    const cp = await activated(h);
    const newIp = freshIp();
    const res = await send(h, payload("contract_product_updated", { ...cp, ip: newIp }));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await waitFor(async () => (await h.bridge.service.services.get(cp.id))?.ip === newIp, 10_000, "the new IP");
    expect(upstreamCalls(h.sb, "change-ip").filter((c) => c.params.ip === cp.ip).map((c) => c.params)).toEqual([
      { ip: cp.ip, newip: newIp, type: "cpanel" },
    ]);
    // The same update again (new event id) changes nothing: the stored IP is already the new one.
    const same = await send(h, payload("contract_product_updated", { ...cp, ip: newIp }));
    expect(same.status).toBe(200);
    expect(same.body.status).toBe("ignored");
  });

  it("turns contract_product_updated with a new product into a LiteSpeed core change", async () => {
    const h = harness();
    const cp = await activated(h, { product_id: "13" });
    await waitFor(async () => (await h.bridge.service.services.get(cp.id))?.upstream_variant === "litespeed4");
    const res = await send(h, payload("contract_product_updated", { ...cp, product_id: "16" }));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await waitFor(async () => (await h.bridge.service.services.get(cp.id))?.variant === "litespeedX", 10_000, "variant litespeedX");
    expect(upstreamCalls(h.sb, "change-core").filter((c) => c.params.ip === cp.ip).map((c) => c.params.new_type)).toEqual(["litespeed4", "litespeedX"]);
  });

  it("records a payment up to next_due_date on contract_product_renewed", async () => {
    const h = harness();
    const cp = await activated(h);
    const res = await send(h, payload("contract_product_renewed", { ...cp, next_due_date: "2026-04-01 00:00:00" }));
    expect(res.status).toBe(202);
    await waitFor(async () => (await h.bridge.service.services.get(cp.id))?.paid_until === Date.parse("2026-04-01T00:00:00Z"), 10_000, "paid_until");
  });

  it("refuses a wrong or missing signature with 401 and stores nothing", async () => {
    const h = harness();
    const before = await h.eventCount();
    const cp = contractProduct();
    expect((await send(h, payload("contract_product_activated", cp), { secret: "wrong-secret-0123456789abcdef" })).status).toBe(401);
    const raw = JSON.stringify(payload("contract_product_activated", cp));
    expect((await h.post("/webhooks/upmind", raw, { "content-type": "application/json" })).status).toBe(401);
    expect((await h.post("/webhooks/upmind", raw, { ...upmindHeaders(raw), "X-Webhook-Signature": "00".repeat(32) })).status).toBe(401);
    expect(await h.eventCount()).toBe(before);
    expect(await h.bridge.service.services.get(cp.id)).toBeUndefined();
  });

  it("answers the same webhook_event_id again with 200 duplicate and buys nothing more", async () => {
    const h = harness();
    const cp = contractProduct();
    const body = payload("contract_product_activated", cp);
    const first = await send(h, body);
    expect(first.status).toBe(202);
    await waitStatus(h.bridge, cp.id, "active");
    await untilIdle(h.bridge);
    const again = await send(h, body);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ event_id: first.body.event_id, status: "duplicate" });
    // The answer comes after whatever the delivery wrote: once the queue is idle, a job it queued has charged.
    await untilIdle(h.bridge);
    expect(h.sb.sandbox.ledger().filter((c) => c.ip === cp.ip)).toHaveLength(1);
  });

  it("a delivery without webhook_event_id replayed with whitespace around it is a duplicate, not another paid cycle", async () => {
    const h = harness();
    const cp = await activated(h);
    const { webhook_event_id: _id, hook_log_id: _log, ...anonymous } = payload("contract_product_renewed", { ...cp, next_due_date: "2026-04-01 00:00:00" });
    const raw = JSON.stringify(anonymous);
    // The signature is over the trimmed body (as Upmind's library computes it).
    const headers = upmindHeaders(raw);
    const first = await h.post("/webhooks/upmind", raw, headers);
    expect(first.status).toBe(202);
    for (const padded of [`${raw}\n`, `  ${raw}\r\n`, `\n${raw} `]) {
      const again = await h.post("/webhooks/upmind", padded, headers);
      expect(again.status, JSON.stringify(padded.slice(0, 3))).toBe(200);
      expect(again.body).toEqual({ event_id: first.body.event_id, status: "duplicate" });
    }
    expect((await h.events("upmind", cp.id)).filter((e) => e.type === "service.renewed")).toHaveLength(1);
  });

  it("ignores hooks it does not act on and products outside the catalogue (200)", async () => {
    const h = harness();
    const other = await send(h, { ...payload("contract_product_activated", contractProduct()), hook_code: "invoice_paid_hook" });
    expect(other.status).toBe(200);
    expect(other.body).toEqual({ status: "ignored", reason: expect.stringContaining("invoice_paid_hook") });
    const hosting = await send(h, payload("contract_product_activated", contractProduct({ product_id: "hosting-basic" })));
    expect(hosting.status).toBe(200);
    expect(hosting.body.status).toBe("ignored");
    const badCycle = await send(h, payload("contract_product_activated", contractProduct({ billing_cycle_months: 5 })));
    expect(badCycle.status).toBe(422);
    expect(badCycle.body.errors).toEqual({ "service.billing_cycle": [expect.stringContaining("5 months")] });
  });
});

/**
 * Upmind signs the body only and sends no timestamp. A body without webhook_event_id (or
 * hook_log_id) and without its own event_datetime says nothing about when it happened, so the
 * bridge takes identical copies received on the same UTC day for one delivery, and the same body
 * on another day for a new event. The route's clock is moved here; the bridge's runs as usual.
 */
describe("Upmind deliveries without an event id", () => {
  const clock = manualClock(Date.UTC(2026, 4, 10, 9, 0, 0));
  const harness = useAdapterHarness({ UPMIND_WEBHOOK_SECRET: UPMIND_SECRET }, { clock });

  /** A payload with no id and no time of its own: only its bytes, which the signature covers. */
  function anonymous(hook: string, cp: ContractProduct, over: Record<string, unknown> = {}) {
    const { webhook_event_id: _id, hook_log_id: _log, event_datetime: _at, ...rest } = payload(hook, cp);
    return JSON.stringify({ ...rest, ...over });
  }
  const paidUntil = async (h: AdapterHarness, id: string) => ((await h.bridge.admin(`/admin/services/${id}`)).body as { paid_until: string | null }).paid_until;

  it("is a duplicate when repeated on the same UTC day, and a new event on a later day", async () => {
    const h = harness();
    clock.set(Date.UTC(2026, 4, 10, 9, 0, 0));
    const cp = await activated(h);
    const { next_due_date: _due, ...undated } = cp;
    // No next_due_date: each recorded payment adds one cycle, so a second one would show.
    const raw = anonymous("contract_product_renewed", undated as ContractProduct);
    const first = await h.post("/webhooks/upmind", raw, upmindHeaders(raw));
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    await waitFor(async () => (await paidUntil(h, cp.id)) === "2026-04-01T00:00:00.000Z", 10_000, "paid_until one cycle on");

    for (const later of [Date.UTC(2026, 4, 10, 9, 0, 1), Date.UTC(2026, 4, 10, 23, 59, 59)]) {
      clock.set(later);
      const again = await h.post("/webhooks/upmind", raw, upmindHeaders(raw));
      expect(again.status, new Date(later).toISOString()).toBe(200);
      expect(again.body).toEqual({ event_id: first.body.event_id, status: "duplicate" });
    }
    await untilIdle(h.bridge);
    expect(await paidUntil(h, cp.id)).toBe("2026-04-01T00:00:00.000Z");

    clock.set(Date.UTC(2026, 5, 10, 9, 0, 0));
    const nextMonth = await h.post("/webhooks/upmind", raw, upmindHeaders(raw));
    expect(nextMonth.status, JSON.stringify(nextMonth.body)).toBe(202);
    expect(nextMonth.body.event_id).not.toBe(first.body.event_id);
    await waitFor(async () => (await paidUntil(h, cp.id)) === "2026-05-01T00:00:00.000Z", 10_000, "paid_until two cycles on");
    expect((await h.events("upmind", cp.id)).filter((e) => e.type === "service.renewed")).toHaveLength(2);
  });

  it("is one event whatever the day when the signed body carries its own event_datetime", async () => {
    const h = harness();
    clock.set(Date.UTC(2026, 4, 10, 9, 0, 0));
    const cp = await activated(h);
    const raw = anonymous("contract_product_renewed", { ...cp, next_due_date: "2026-04-01 00:00:00" }, { event_datetime: "2026-05-10 08:59:58" });
    const first = await h.post("/webhooks/upmind", raw, upmindHeaders(raw));
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    clock.set(Date.UTC(2026, 6, 1));
    const later = await h.post("/webhooks/upmind", raw, upmindHeaders(raw));
    expect(later.status).toBe(200);
    expect(later.body).toEqual({ event_id: first.body.event_id, status: "duplicate" });
  });
});
