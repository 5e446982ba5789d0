import { PassThrough } from "node:stream";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { createCatalog } from "../../src/catalog/catalog.js";
import { createApp } from "../../src/http/app.js";
import { systemClock } from "../../src/jobs/clock.js";
import { createLogger } from "../../src/log/logger.js";
import { adapterRouters } from "../../src/webhooks/adapters/index.js";
import { settle, sleep, upstreamCalls, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { BLESTA_TOKEN, blestaHeaders, freshIp, numericId, useAdapterHarness, type AdapterHarness } from "./helpers.js";

interface ServiceOver {
  id?: string;
  package_id?: string;
  term?: number;
  period?: string;
  ip?: string;
  status?: string;
  date_renews?: string;
}

/** A Blesta service as `Services::get()` returns it (the parts the bridge reads). */
function service(over: ServiceOver = {}) {
  const id = over.id ?? numericId();
  const packageId = over.package_id ?? "12";
  return {
    id,
    id_code: `S${id}`,
    client_id: "1500",
    status: over.status ?? "active",
    date_added: "2026-01-01 09:00:00",
    date_renews: over.date_renews ?? "2026-02-01 09:00:00",
    package: { id: packageId, name: "cPanel licence" },
    package_pricing: { id: "9", package_id: packageId, term: over.term ?? 1, period: over.period ?? "month" },
    fields: [
      { key: "hostname", value: "server.example.com", encrypted: 0 },
      { key: "ip", value: over.ip ?? freshIp(), encrypted: 0 },
    ],
    client: { id: "1500", email: "cleo@example.com", first_name: "Cleo", last_name: "Example" },
  };
}
type BlestaService = ReturnType<typeof service>;
const ipOf = (s: BlestaService) => s.fields.find((f) => f.key === "ip")!.value;

async function send(h: AdapterHarness, event: string, body: unknown, token = BLESTA_TOKEN, headers: Record<string, string> = {}) {
  return h.post(`/webhooks/blesta/${token}`, JSON.stringify(body), { ...blestaHeaders(event), ...headers });
}

async function added(h: AdapterHarness, over: ServiceOver = {}): Promise<BlestaService> {
  const svc = service(over);
  const res = await send(h, "Services.addAfter", { service_id: svc.id, vars: { status: svc.status }, service: svc });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  await waitStatus(h.bridge, svc.id, "active");
  return svc;
}

describe("Blesta adapter", () => {
  const harness = useAdapterHarness({ BLESTA_WEBHOOK_TOKEN: BLESTA_TOKEN, BLESTA_ALLOWED_IPS: "127.0.0.1/32,::1" });

  it("accepts Services.addAfter with the right token (202), registers the licence and is charged once", async () => {
    const h = harness();
    const svc = service({ term: 3, period: "month" });
    const res = await send(h, "Services.addAfter", { service_id: svc.id, vars: {}, service: svc });
    expect(res.status).toBe(202);
    await waitStatus(h.bridge, svc.id, "active");
    expect(upstreamCalls(h.sb, "register").filter((c) => c.params.ip === ipOf(svc)).map((c) => c.params)).toEqual([
      { ip: ipOf(svc), type: "cpanel", billingcycle: 3 },
    ]);
    expect(h.sb.sandbox.ledger().filter((c) => c.ip === ipOf(svc))).toEqual([expect.objectContaining({ op: "register", months: 3 })]);
    expect(h.bridge.service.services.get(svc.id)).toMatchObject({ billing_cycle: "quarterly", customer_name: "Cleo Example" });
  });

  it("refuses a wrong token with 401 and stores nothing", async () => {
    const h = harness();
    const before = h.events("blesta").length;
    const svc = service();
    const res = await send(h, "Services.addAfter", { service_id: svc.id, service: svc }, BLESTA_TOKEN.slice(0, -1) + "X");
    expect(res.status).toBe(401);
    expect((await send(h, "Services.addAfter", { service_id: svc.id, service: svc }, "short")).status).toBe(401);
    expect(h.events("blesta").length).toBe(before);
    expect(h.bridge.service.services.get(svc.id)).toBeUndefined();
  });

  it("turns one Services.editAfter with date_renews moved and a new IP into renewed, then ip_changed", async () => {
    const h = harness();
    const old = await added(h);
    const newIp = freshIp();
    const edited = {
      ...old,
      date_renews: "2026-03-01 09:00:00",
      fields: old.fields.map((f) => (f.key === "ip" ? { ...f, value: newIp } : f)),
    };
    const body = { service_id: old.id, vars: { date_renews: "2026-03-01 09:00:00" }, old_service: old, service: edited };
    const res = await send(h, "Services.editAfter", body);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const events = res.body.events as { type: string; webhook_id: string; status: string }[];
    expect(events.map((e) => [e.type, e.status])).toEqual([
      ["service.renewed", "accepted"],
      ["service.ip_changed", "accepted"],
    ]);
    const [renewedId, ipId] = events.map((e) => e.webhook_id);
    expect(renewedId).toMatch(/:renewed$/);
    expect(ipId).toBe(renewedId!.replace(/:renewed$/, ":ip_changed"));
    expect(h.events("blesta", old.id).map((e) => e.type)).toEqual(["service.created", "service.renewed", "service.ip_changed"]);

    await waitFor(() => h.bridge.service.services.get(old.id)?.ip === newIp, 10_000, "the new IP");
    expect(upstreamCalls(h.sb, "change-ip").filter((c) => c.params.ip === ipOf(old)).map((c) => c.params)).toEqual([
      { ip: ipOf(old), newip: newIp, type: "cpanel" },
    ]);
    expect(h.bridge.service.services.get(old.id)?.paid_until).toBe(Date.parse("2026-03-01T09:00:00Z"));

    // Blesta's "Resend" posts the same body: both events are duplicates, nothing new is bought or queued.
    await settle(h.bridge);
    const ledger = h.sb.sandbox.ledger().length;
    const again = await send(h, "Services.editAfter", body);
    expect(again.status).toBe(200);
    expect(again.body.status).toBe("duplicate");
    await sleep(150);
    expect(h.sb.sandbox.ledger()).toHaveLength(ledger);
    expect(h.events("blesta", old.id)).toHaveLength(3);
  });

  it("stores none of an edit's events when a rule refuses one of them (422): the IP change is not applied", async () => {
    const h = harness();
    const old = await added(h);
    const newIp = freshIp();
    // A new renewal date, a new IP and a package change to a product that is not a LiteSpeed variant.
    const edited = {
      ...old,
      date_renews: "2026-03-01 09:00:00",
      package: { id: "15", name: "Imunify360" },
      package_pricing: { ...old.package_pricing, package_id: "15" },
      fields: old.fields.map((f) => (f.key === "ip" ? { ...f, value: newIp } : f)),
    };
    const res = await send(h, "Services.editAfter", { service_id: old.id, vars: {}, old_service: old, service: edited });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.errors).toEqual({ "changes.product_id": [expect.stringContaining("LiteSpeed")] });
    await settle(h.bridge);
    expect(h.events("blesta", old.id).map((e) => e.type)).toEqual(["service.created"]);
    expect(h.bridge.service.services.get(old.id)).toMatchObject({ ip: ipOf(old), ip_changes: 0 });
    expect(upstreamCalls(h.sb, "change-ip").filter((c) => c.params.ip === ipOf(old))).toEqual([]);
  });

  it("moves a LiteSpeed licence when the package changes in an edit", async () => {
    const h = harness();
    const old = await added(h, { package_id: "14" });
    const edited = { ...old, package: { id: "15", name: "LiteSpeed 8" }, package_pricing: { ...old.package_pricing, package_id: "15" } };
    const res = await send(h, "Services.editAfter", { service_id: old.id, vars: {}, old_service: old, service: edited });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await waitFor(() => h.bridge.service.services.get(old.id)?.variant === "litespeed8", 10_000, "variant litespeed8");
    expect(upstreamCalls(h.sb, "change-core").filter((c) => c.params.ip === ipOf(old)).map((c) => c.params)).toEqual([
      { ip: ipOf(old), old_type: "litespeed", new_type: "litespeed8" },
    ]);
  });

  it("suspends upstream on Services.suspendAfter and answers an edit that changes nothing with 200 ignored", async () => {
    const h = harness();
    const svc = await added(h);
    const res = await send(h, "Services.suspendAfter", { service_id: svc.id, old_service: svc, service: { ...svc, status: "suspended" } });
    expect(res.status).toBe(202);
    await waitStatus(h.bridge, svc.id, "suspended");
    expect(upstreamCalls(h.sb, "suspend").filter((c) => c.params.ip === ipOf(svc)).map((c) => c.params)).toEqual([{ ip: ipOf(svc), type: "cpanel" }]);
    const noop = await send(h, "Services.editAfter", { service_id: svc.id, vars: {}, old_service: svc, service: svc });
    expect(noop.status).toBe(200);
    expect(noop.body.status).toBe("ignored");
  });

  it("buys a pending (unpaid) service only when an edit activates it", async () => {
    const h = harness();
    const pending = service({ status: "pending" });
    const res = await send(h, "Services.addAfter", { service_id: pending.id, service: pending });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ignored", reason: expect.stringContaining("pending") });
    expect(h.bridge.service.services.get(pending.id)).toBeUndefined();
    const activated = await send(h, "Services.editAfter", { service_id: pending.id, old_service: pending, service: { ...pending, status: "active" } });
    expect(activated.status, JSON.stringify(activated.body)).toBe(202);
    await waitStatus(h.bridge, pending.id, "active");
    expect(h.sb.sandbox.ledger().filter((c) => c.ip === ipOf(pending))).toHaveLength(1);
  });

  it("asks for JSON (415) when the webhook's method is form POST", async () => {
    const h = harness();
    const res = await h.post(`/webhooks/blesta/${BLESTA_TOKEN}`, "service_id=1", { ...blestaHeaders("Services.addAfter"), "content-type": "application/x-www-form-urlencoded" });
    expect(res.status).toBe(415);
    expect(res.body.error).toMatch(/JSON/);
  });
});

describe("Blesta adapter with an IP allow-list that excludes the sender", () => {
  const harness = useAdapterHarness({ BLESTA_WEBHOOK_TOKEN: BLESTA_TOKEN, BLESTA_ALLOWED_IPS: "192.0.2.0/24,2001:db8::/32" });

  it("refuses a request from outside the allow-list with 403, even with the right token, and stores nothing", async () => {
    const h = harness();
    const svc = service();
    const res = await send(h, "Services.addAfter", { service_id: svc.id, service: svc });
    expect(res.status).toBe(403);
    expect(h.events("blesta")).toEqual([]);
    expect(h.sb.sandbox.ledger()).toEqual([]);
  });
});

describe("Blesta adapter and the request log", () => {
  it("never writes the token in the URL to the log", async () => {
    const lines: string[] = [];
    const sink = new PassThrough();
    sink.on("data", (chunk: Buffer) => lines.push(chunk.toString("utf8")));
    const logger = createLogger({ level: "info", destination: sink, pretty: false });
    const config = {
      HOSTBILL_WEBHOOK_SECRET: undefined,
      UPMIND_WEBHOOK_SECRET: undefined,
      BLESTA_WEBHOOK_TOKEN: BLESTA_TOKEN,
      BLESTA_ALLOWED_IPS: undefined,
      ADAPTER_FIELD_MAPS_FILE: undefined,
      catalog: createCatalog({ products: {} }),
    };
    const app = createApp({ logger, routers: adapterRouters({ accept: async (_s, items) => items.map(() => ({ status: "unknown_service" as const })), config, clock: systemClock, logger }) });
    const ok = await request(app).post(`/webhooks/blesta/${BLESTA_TOKEN}`).set(blestaHeaders("Services.addAfter")).send({ service_id: "1" });
    expect(ok.status).toBe(422);
    const wrong = await request(app).post(`/webhooks/blesta/${BLESTA_TOKEN}x`).set(blestaHeaders("Services.addAfter")).send({});
    expect(wrong.status).toBe(401);
    await sleep(20);
    const log = lines.join("");
    expect(log).toContain("/webhooks/blesta/[token]");
    expect(log).not.toContain(BLESTA_TOKEN);
  });
});
