import { PassThrough } from "node:stream";
import { stringify as formOf } from "qs";
import request from "supertest";
import { describe, expect, it } from "vitest";
import { createCatalog } from "../../src/catalog/catalog.js";
import { createApp } from "../../src/http/app.js";
import { systemClock } from "../../src/clock.js";
import { createLogger } from "../../src/log/logger.js";
import { adapterRouters } from "../../src/webhooks/adapters/index.js";
import { untilIdle, upstreamCalls, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { BLESTA_TOKEN, blestaHeaders, freshIp, numericId, useAdapterHarness, type AdapterHarness } from "./helpers.js";
import { usePanelApi, type PanelApiRequest } from "./panel-api.js";

/**
 * Blesta's Webhooks plugin as it really posts (blesta/plugin-webhooks, models/webhooks_events.php):
 * the event's own parameters with no envelope — `service_id`, `vars`, `old_service` and, on add
 * and edit, `service_activated` — the event in X-Blesta-Event, nothing signed, as JSON (POST JSON)
 * or a form (POST). No client e-mail, and no package on Services.addAfter: those come from Blesta's
 * API when it is configured (a stand-in here).
 */

interface BlestaService {
  id: number;
  client_id: number;
  pricing_id: number;
  status: string;
  date_renews: string | null;
  package: { id: number; name: string };
  package_pricing: { id: number; package_id: number; term: number; period: string };
  fields: { key: string; value: string; serialized: number; encrypted: number }[];
}

/** `Services::get()`: what `old_service` holds and what the API's services/get answers. */
function service(over: { package?: number; pricing?: number; term?: number; period?: string; ip?: string; status?: string } = {}): BlestaService {
  const pkg = over.package ?? 12;
  return {
    id: Number(numericId()),
    client_id: 3,
    pricing_id: over.pricing ?? pkg * 10,
    status: over.status ?? "active",
    date_renews: "2026-02-05 10:00:00",
    package: { id: pkg, name: `Package ${pkg}` },
    package_pricing: { id: over.pricing ?? pkg * 10, package_id: pkg, term: over.term ?? 1, period: over.period ?? "month" },
    fields: [{ key: "license_ip", value: over.ip ?? freshIp(), serialized: 0, encrypted: 0 }],
  };
}
const ipOf = (s: BlestaService) => s.fields[0]!.value;

/** The Blesta API stand-in's data: services by id, clients by id, packages by pricing id, invoices. */
const blesta = {
  services: new Map<string, BlestaService>(),
  clients: new Map<string, Record<string, unknown>>([["3", { id: 3, email: "cleo@example.com", first_name: "Cleo", last_name: "Example" }]]),
  invoices: new Map<string, Record<string, unknown>>(),
};

function blestaApi(req: PanelApiRequest): unknown {
  if (req.authorization !== `Basic ${Buffer.from("bridge:blesta-api-key").toString("base64")}`) return 401;
  if (req.path === "/api/services/get.json") return wrap(blesta.services.get(req.query.service_id!));
  if (req.path === "/api/clients/get.json") return wrap(blesta.clients.get(req.query.client_id!));
  if (req.path === "/api/packages/getByPricingId.json") return { response: { id: Number(req.query.pricing_id) / 10 } };
  if (req.path === "/api/invoices/get.json") return wrap(blesta.invoices.get(req.query.invoice_id!));
  return undefined;
}
const wrap = (v: unknown) => (v === undefined ? undefined : { response: v });

async function send(h: AdapterHarness, event: string | undefined, body: unknown, o: { form?: boolean; query?: string; token?: string } = {}) {
  const headers = { ...blestaHeaders(event ?? ""), ...(o.form ? { "content-type": "application/x-www-form-urlencoded" } : {}) };
  if (!event) delete (headers as Record<string, string>)["X-Blesta-Event"];
  return h.post(`/webhooks/blesta/${o.token ?? BLESTA_TOKEN}${o.query ?? ""}`, o.form ? formOf(body) : JSON.stringify(body), headers);
}

/** What Services.editAfter carries when Blesta activates a pending service (payment or approval). */
const activation = (svc: BlestaService) => ({
  service_id: svc.id,
  service_activated: true,
  vars: { license_ip: ipOf(svc), status: "active", date_renews: "2026-02-05T10:00:00+00:00", pricing_id: svc.pricing_id, client_id: 3, qty: 1, use_module: "true" },
  old_service: { ...svc, status: "pending", date_renews: null },
});

async function activated(h: AdapterHarness, over: Parameters<typeof service>[0] = {}): Promise<BlestaService> {
  const svc = service(over);
  blesta.services.set(String(svc.id), svc);
  const res = await send(h, "Services.editAfter", activation(svc));
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  await waitStatus(h.bridge, String(svc.id), "active");
  return svc;
}

describe("Blesta adapter, with Blesta's API for what the plugin does not send", () => {
  const api = usePanelApi(blestaApi);
  const harness = useAdapterHarness(() => ({
    BLESTA_WEBHOOK_TOKEN: BLESTA_TOKEN,
    BLESTA_ALLOWED_IPS: "127.0.0.1/32,::1",
    BLESTA_API_URL: `${api().url}/api`,
    BLESTA_API_USER: "bridge",
    BLESTA_API_KEY: "blesta-api-key",
  }));

  it.each([[null], [[]], ["text"]])("answers a body that is valid JSON but no object (%j) with 422 naming the body, as every way in does", async (body) => {
    const res = await send(harness(), "Services.edit", body);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: "validation", errors: { "(body)": ["must be a JSON object or a form"] } });
  });

  it("buys the licence on Services.addAfter with service_activated, reading package and e-mail from the API", async () => {
    const h = harness();
    const svc = service({ term: 3, period: "month" });
    blesta.services.set(String(svc.id), svc);
    const body = {
      service_id: svc.id,
      service_activated: true,
      vars: { pricing_id: svc.pricing_id, client_id: 3, module_row_id: 1, status: "active", use_module: "true", qty: 1, license_ip: ipOf(svc), configoptions: {} },
    };
    const res = await send(h, "Services.addAfter", body);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await waitStatus(h.bridge, String(svc.id), "active");
    expect(upstreamCalls(h.sb, "register").filter((c) => c.params.ip === ipOf(svc)).map((c) => c.params)).toEqual([{ ip: ipOf(svc), type: "cpanel", billingcycle: 3 }]);
    expect(await h.bridge.service.services.get(String(svc.id))).toMatchObject({ customer_email: "cleo@example.com", customer_name: "Cleo Example" });
    expect(api().requests.map((r) => r.path)).toEqual(expect.arrayContaining(["/api/services/get.json", "/api/clients/get.json"]));
  });

  it("reads the plugin's POST (form) method as well as POST JSON", async () => {
    const h = harness();
    const svc = service({ package: 17, term: 1, period: "year" });
    blesta.services.set(String(svc.id), svc);
    const res = await send(h, "Services.editAfter", activation(svc), { form: true });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await waitStatus(h.bridge, String(svc.id), "active");
    expect(h.sb.sandbox.ledger().filter((c) => c.ip === ipOf(svc))).toEqual([expect.objectContaining({ type: "cloudlinux", months: 12 })]);
  });

  it("leaves a service that is not active yet to its activation (200 ignored)", async () => {
    const h = harness();
    const svc = service({ status: "pending" });
    const res = await send(h, "Services.addAfter", { service_id: svc.id, service_activated: false, vars: { status: "pending", use_module: "false", pricing_id: svc.pricing_id } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ignored", reason: expect.stringContaining("not active yet") });
    expect(await h.events("blesta", String(svc.id))).toEqual([]);
  });

  it("turns an edit of the IP service field into change-ip, from the old value to the new", async () => {
    const h = harness();
    const svc = await activated(h);
    const newIp = freshIp();
    const res = await send(h, "Services.editAfter", { service_id: svc.id, vars: { license_ip: newIp, pricing_id: svc.pricing_id, qty: 1, use_module: "true" }, old_service: svc });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await waitFor(async () => (await h.bridge.service.services.get(String(svc.id)))?.ip === newIp, 10_000, "the new IP");
    expect(upstreamCalls(h.sb, "change-ip").filter((c) => c.params.ip === ipOf(svc)).map((c) => c.params.newip)).toEqual([newIp]);
  });

  it("turns a pricing change to another LiteSpeed package into a core change (package read by pricing id)", async () => {
    const h = harness();
    const svc = await activated(h, { package: 14 });
    const res = await send(h, "Services.editAfter", { service_id: svc.id, vars: { pricing_id: 150, qty: 1, use_module: "true" }, old_service: svc });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await waitFor(async () => (await h.bridge.service.services.get(String(svc.id)))?.variant === "litespeed8", 10_000, "variant litespeed8");
    expect(api().requests.at(-1)).toMatchObject({ path: "/api/packages/getByPricingId.json", query: { pricing_id: "150" } });
  });

  it("stores none of an edit's events when a rule refuses one of them (422): the IP change is not applied", async () => {
    const h = harness();
    const svc = await activated(h);
    const newIp = freshIp();
    // A new IP and a move to package 18 (Imunify360): not a LiteSpeed core change.
    const res = await send(h, "Services.editAfter", { service_id: svc.id, vars: { license_ip: newIp, pricing_id: 180 }, old_service: svc });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.errors).toEqual({ "changes.product_id": [expect.stringContaining("LiteSpeed")] });
    await untilIdle(h.bridge);
    expect((await h.events("blesta", String(svc.id))).map((e) => e.type)).toEqual(["service.created"]);
    expect(await h.bridge.service.services.get(String(svc.id))).toMatchObject({ ip: ipOf(svc), ip_changes: 0 });
  });

  it("does not take a moved renew date for a payment (Blesta moves it when it invoices): 200 ignored", async () => {
    const h = harness();
    const svc = await activated(h);
    const res = await send(h, "Services.editAfter", { service_id: svc.id, vars: { date_renews: "2026-03-05T10:00:00+00:00", use_module: "false" }, old_service: svc });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("ignored");
  });

  it("renews on Invoices.setClosedAfter: the invoice's service lines, up to each service's renew date", async () => {
    const h = harness();
    const svc = await activated(h);
    blesta.services.set(String(svc.id), { ...svc, date_renews: "2026-03-05 10:00:00" });
    const invoiceId = numericId();
    blesta.invoices.set(invoiceId, { id: Number(invoiceId), line_items: [{ id: 1, service_id: svc.id, amount: "10.00" }, { id: 2, service_id: null }, { id: 3, service_id: 999_999 }] });
    const res = await send(h, "Invoices.setClosedAfter", { invoice_id: Number(invoiceId), old_invoice: { id: Number(invoiceId), status: "active" } });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await waitFor(async () => (await h.bridge.service.services.get(String(svc.id)))?.paid_until === Date.parse("2026-03-05T10:00:00Z"), 10_000, "paid until the renew date");
    const again = await send(h, "Invoices.setClosedAfter", { invoice_id: Number(invoiceId), old_invoice: { id: Number(invoiceId), status: "active", x: 1 } });
    expect(again.body.status).toBe("duplicate");
  });

  it("suspends and unsuspends upstream on Services.suspendAfter / unsuspendAfter", async () => {
    const h = harness();
    const svc = await activated(h);
    expect((await send(h, "Services.suspendAfter", { service_id: svc.id, vars: { use_module: "true", status: "suspended", date_suspended: "2026-01-20 10:00:00" }, old_service: svc })).status).toBe(202);
    await waitStatus(h.bridge, String(svc.id), "suspended");
    expect((await send(h, "Services.unsuspendAfter", { service_id: svc.id, vars: { use_module: "true", date_suspended: null, date_canceled: null, status: "active" }, old_service: { ...svc, status: "suspended" } })).status).toBe(202);
    await waitStatus(h.bridge, String(svc.id), "active");
    expect(upstreamCalls(h.sb, "suspend", "unsuspend").filter((c) => c.params.ip === ipOf(svc)).map((c) => c.op)).toEqual(["suspend", "unsuspend"]);
  });

  it("takes a resend with another X-Webhook-Id for the same delivery: the header names the webhook, not the delivery", async () => {
    const h = harness();
    const svc = await activated(h);
    const raw = JSON.stringify({ service_id: svc.id, vars: { use_module: "true", status: "suspended" }, old_service: svc });
    const path = `/webhooks/blesta/${BLESTA_TOKEN}`;
    const first = await h.post(path, raw, blestaHeaders("Services.suspendAfter"));
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const again = await h.post(path, raw, { ...blestaHeaders("Services.suspendAfter"), "X-Webhook-Id": "4" });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ event_id: first.body.event_id, status: "duplicate" });
    await waitStatus(h.bridge, String(svc.id), "suspended");
    await untilIdle(h.bridge);
    expect(upstreamCalls(h.sb, "suspend").filter((c) => c.params.ip === ipOf(svc))).toHaveLength(1);
  });

  it("terminates on Services.cancelAfter only when the cancellation is carried out, not when it is scheduled", async () => {
    const h = harness();
    const svc = await activated(h);
    const scheduled = await send(h, "Services.cancelAfter", { service_id: svc.id, vars: { date_canceled: "2026-02-05 10:00:00", use_module: "false" }, old_service: svc });
    expect(scheduled.status).toBe(200);
    expect(scheduled.body).toEqual({ status: "ignored", reason: expect.stringContaining("scheduled for 2026-02-05") });
    await untilIdle(h.bridge);
    expect((await h.bridge.service.services.get(String(svc.id)))?.status).toBe("active");
    const carriedOut = await send(h, "Services.cancelAfter", { service_id: svc.id, vars: { date_canceled: "2026-02-05 10:00:00", status: "canceled", use_module: "true" }, old_service: svc });
    expect(carriedOut.status).toBe(202);
    await waitStatus(h.bridge, String(svc.id), "terminated");
  });

  it("takes the event from ?event= when an older plugin sends no X-Blesta-Event header, and needs one of the two", async () => {
    const h = harness();
    const svc = await activated(h);
    const res = await send(h, undefined, { service_id: svc.id, vars: { status: "suspended", use_module: "true" }, old_service: svc }, { query: "?event=Services.suspendAfter" });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const none = await send(h, undefined, { service_id: svc.id });
    expect(none.status).toBe(422);
    expect(none.body.errors).toEqual({ event: [expect.stringContaining("X-Blesta-Event")] });
  });

  it("refuses a wrong token with 401 and stores nothing", async () => {
    const h = harness();
    const svc = service();
    const res = await send(h, "Services.editAfter", activation(svc), { token: `${BLESTA_TOKEN}x` });
    expect(res.status).toBe(401);
    expect(await h.events("blesta", String(svc.id))).toEqual([]);
  });
});

describe("Blesta adapter without Blesta's API", () => {
  const harness = useAdapterHarness({ BLESTA_WEBHOOK_TOKEN: BLESTA_TOKEN });

  it("buys on an activation from what old_service holds, without a mail, saying why", async () => {
    const h = harness();
    const svc = service();
    const res = await send(h, "Services.editAfter", activation(svc));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.notes).toEqual([expect.stringContaining("BLESTA_API_URL")]);
    await waitStatus(h.bridge, String(svc.id), "active");
    expect((await h.bridge.service.services.history(String(svc.id))).map((e) => e.action)).toContain("install mail not sent");
  });

  it("answers Services.addAfter, which carries no package, with a 422 saying what to configure", async () => {
    const h = harness();
    const svc = service();
    const res = await send(h, "Services.addAfter", { service_id: svc.id, service_activated: true, vars: { status: "active", pricing_id: svc.pricing_id, license_ip: ipOf(svc) } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual({ "service.product_id": [expect.stringContaining("BLESTA_API_URL")] });
    expect(h.sb.sandbox.ledger().filter((c) => c.ip === ipOf(svc))).toEqual([]);
  });
});

describe("Blesta adapter with an IP allow-list that excludes the sender", () => {
  const harness = useAdapterHarness({ BLESTA_WEBHOOK_TOKEN: BLESTA_TOKEN, BLESTA_ALLOWED_IPS: "192.0.2.0/24,2001:db8::/32" });

  it("refuses a request from outside the allow-list with 403, even with the right token, and stores nothing", async () => {
    const h = harness();
    const res = await send(h, "Services.editAfter", activation(service()));
    expect(res.status).toBe(403);
    expect(await h.eventCount()).toBe(0);
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
    const app = createApp({ logger, routers: adapterRouters(config, { accept: async (_s, items) => items.map(() => ({ status: "unknown_service" as const })), clock: systemClock, logger }) });
    const ok = await request(app).post(`/webhooks/blesta/${BLESTA_TOKEN}`).set(blestaHeaders("Services.suspendAfter")).send({ service_id: "1" });
    expect(ok.status).toBe(409);
    const wrong = await request(app).post(`/webhooks/blesta/${BLESTA_TOKEN}x`).set(blestaHeaders("Services.addAfter")).send({});
    expect(wrong.status).toBe(401);
    // Request lines are written once each answer is finished: wait for both, then look for the token.
    await waitFor(() => lines.join("").split("/webhooks/blesta/[token]").length - 1 >= 2, 5_000, "both request lines");
    const log = lines.join("");
    expect(log).toContain("/webhooks/blesta/[token]");
    expect(log).not.toContain(BLESTA_TOKEN);
  });
});
