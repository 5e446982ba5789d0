import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { settle, sleep, upstreamCalls, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { freshIp, HOSTBILL_SECRET, hostbillHeaders, numericId, useAdapterHarness, type AdapterHarness } from "./helpers.js";

function account(over: { id?: string; product_id?: string; cycle?: string; ip?: string } = {}) {
  return {
    id: over.id ?? numericId(),
    product_id: over.product_id ?? "12",
    billingcycle: over.cycle ?? "Monthly",
    ip: over.ip ?? freshIp(),
    status: "Active",
    next_due: "2026-03-01",
  };
}

const client = { id: "77", email: "ann@example.com", firstname: "Ann", lastname: "Example" };

async function send(h: AdapterHarness, body: unknown, o: Parameters<typeof hostbillHeaders>[1] = {}) {
  const raw = JSON.stringify(body);
  return h.post("/webhooks/hostbill", raw, hostbillHeaders(raw, o));
}

/** Creates an account through the adapter and waits for its licence. */
async function created(h: AdapterHarness, over: Parameters<typeof account>[0] = {}) {
  const acc = account(over);
  const res = await send(h, { event: "after_accountcreate", account: acc, client });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  await waitStatus(h.bridge, acc.id, "active");
  return acc;
}

describe("HostBill adapter", () => {
  const harness = useAdapterHarness({ HOSTBILL_WEBHOOK_SECRET: HOSTBILL_SECRET });

  it("accepts a signed after_accountcreate (202), registers the licence upstream and is charged once", async () => {
    const h = harness();
    const acc = account({ cycle: "m" });
    const res = await send(h, { event: "after_accountcreate", account: acc, client });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ event_id: expect.any(String), status: "accepted" });
    await waitStatus(h.bridge, acc.id, "active");
    expect(upstreamCalls(h.sb, "register").filter((c) => c.params.ip === acc.ip).map((c) => c.params)).toEqual([
      { ip: acc.ip, type: "cpanel", billingcycle: 1 },
    ]);
    expect(h.sb.sandbox.ledger().filter((c) => c.ip === acc.ip)).toEqual([expect.objectContaining({ op: "register", type: "cpanel", months: 1 })]);
    expect(h.bridge.service.services.get(acc.id)).toMatchObject({ customer_email: "ann@example.com", customer_name: "Ann Example", billing_cycle: "monthly" });
  });

  it("translates HostBill's cycle words into the catalogue's months (Annually → 12)", async () => {
    const h = harness();
    const acc = await created(h, { product_id: "17", cycle: "Annually" });
    expect(h.sb.sandbox.ledger().filter((c) => c.ip === acc.ip)).toEqual([expect.objectContaining({ type: "cloudlinux", months: 12 })]);
  });

  it("answers a repeated delivery with 200 duplicate and buys nothing more", async () => {
    const h = harness();
    const acc = account();
    const raw = JSON.stringify({ event: "after_accountcreate", account: acc, client });
    const headers = hostbillHeaders(raw);
    const first = await h.post("/webhooks/hostbill", raw, headers);
    expect(first.status).toBe(202);
    await waitStatus(h.bridge, acc.id, "active");
    await settle(h.bridge);
    const again = await h.post("/webhooks/hostbill", raw, headers);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ event_id: first.body.event_id, status: "duplicate" });
    await sleep(150);
    expect(h.sb.sandbox.ledger().filter((c) => c.ip === acc.ip)).toHaveLength(1);
    expect(h.events("hostbill", acc.id)).toHaveLength(1);
  });

  it("refuses a wrong or missing signature with 401 and stores nothing", async () => {
    const h = harness();
    const before = h.events("hostbill").length;
    const acc = account();
    const wrong = await send(h, { event: "after_accountcreate", account: acc, client }, { secret: "not-the-secret-0123456789" });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toMatch(/signature/i);
    const raw = JSON.stringify({ event: "after_accountcreate", account: acc, client });
    const missing = await h.post("/webhooks/hostbill", raw, { "content-type": "application/json", "HB-Timestamp": String(Math.floor(Date.now() / 1000)) });
    expect(missing.status).toBe(401);
    // A valid signature over a different body.
    const tampered = await h.post("/webhooks/hostbill", raw.replace(acc.ip, "203.0.113.250"), hostbillHeaders(raw));
    expect(tampered.status).toBe(401);
    expect(h.events("hostbill").length).toBe(before);
    expect(h.bridge.service.services.get(acc.id)).toBeUndefined();
  });

  it("refuses a correctly signed delivery whose timestamp is more than 5 minutes off (401)", async () => {
    const h = harness();
    const before = h.events("hostbill").length;
    const acc = account();
    const old = await send(h, { event: "after_accountcreate", account: acc, client }, { nowMs: Date.now() - 6 * 60_000 });
    expect(old.status).toBe(401);
    expect(old.body.error).toMatch(/too old/);
    const future = await send(h, { event: "after_accountcreate", account: acc, client }, { nowMs: Date.now() + 6 * 60_000 });
    expect(future.status).toBe(401);
    expect(h.events("hostbill").length).toBe(before);
  });

  it("suspends and unsuspends upstream on after_accountsuspend / after_accountunsuspend", async () => {
    const h = harness();
    const acc = await created(h);
    expect((await send(h, { event: "after_accountsuspend", account: acc, client })).status).toBe(202);
    await waitStatus(h.bridge, acc.id, "suspended");
    expect(upstreamCalls(h.sb, "suspend").filter((c) => c.params.ip === acc.ip).map((c) => c.params)).toEqual([{ ip: acc.ip, type: "cpanel" }]);
    expect((await send(h, { event: "after_accountunsuspend", account: acc, client })).status).toBe(202);
    await waitStatus(h.bridge, acc.id, "active");
    expect(upstreamCalls(h.sb, "unsuspend").filter((c) => c.params.ip === acc.ip)).toHaveLength(1);
  });

  it("moves a LiteSpeed licence's cores on after_accountchangepackage (13 → 15)", async () => {
    const h = harness();
    const acc = await created(h, { product_id: "13" });
    await waitFor(() => h.bridge.service.services.get(acc.id)?.upstream_variant === "litespeed4");
    const res = await send(h, { event: "after_accountchangepackage", account: { ...acc, product_id: "15" }, old_product_id: "13", new_product_id: "15" });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await waitFor(() => h.bridge.service.services.get(acc.id)?.variant === "litespeed8", 10_000, "variant litespeed8");
    expect(upstreamCalls(h.sb, "change-core").filter((c) => c.params.ip === acc.ip).map((c) => c.params)).toEqual([
      { ip: acc.ip, old_type: "litespeed", new_type: "litespeed4" },
      { ip: acc.ip, old_type: "litespeed4", new_type: "litespeed8" },
    ]);
    expect(h.sb.sandbox.ledger().filter((c) => c.ip === acc.ip)).toHaveLength(1);
  });

  it("turns after_invoicefullpaid into service.renewed for the licence it pays, ignoring other accounts", async () => {
    const h = harness();
    const acc = await created(h);
    const invoice = {
      id: numericId(),
      status: "Paid",
      items: [
        { id: "1", type: "Hosting", item_id: acc.id, next_due: "2026-05-01" },
        { id: "2", type: "Hosting", item_id: "999999" },
        { id: "3", type: "Domain Register", item_id: "55" },
      ],
    };
    const res = await send(h, { event: "after_invoicefullpaid", invoice });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.events).toEqual([
      expect.objectContaining({ type: "service.renewed", webhook_id: `invoice:${invoice.id}:${acc.id}`, status: "accepted" }),
      expect.objectContaining({ type: "service.renewed", webhook_id: `invoice:${invoice.id}:999999`, status: "ignored" }),
    ]);
    await waitFor(() => h.bridge.service.services.get(acc.id)?.paid_until === Date.parse("2026-05-01"), 10_000, "paid_until 2026-05-01");
    // A re-signed retry of the same invoice is a duplicate: keyed by invoice and account, not by timestamp.
    const again = await send(h, { event: "after_invoicefullpaid", invoice }, { nowMs: Date.now() + 2000 });
    expect(again.status).toBe(200);
    expect(again.body.status).toBe("duplicate");
  });

  it("answers 200 ignored for hooks it does not act on, so HostBill stops retrying", async () => {
    const h = harness();
    const unknown = await send(h, { event: "after_clientadded", client });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({ status: "ignored", reason: expect.stringContaining("after_clientadded") });
    const hosting = account({ product_id: "999" });
    const notLicence = await send(h, { event: "after_accountcreate", account: hosting, client });
    expect(notLicence.status).toBe(200);
    expect(notLicence.body).toEqual({ status: "ignored", reason: expect.stringContaining("999") });
    const suspendHosting = await send(h, { event: "after_accountsuspend", account: hosting });
    expect(suspendHosting.status).toBe(200);
    expect(suspendHosting.body.status).toBe("ignored");
    expect(h.events("hostbill", hosting.id)).toEqual([]);
  });

  it("answers 409 for a licence event about an account it has never seen, 422 naming bad fields", async () => {
    const h = harness();
    const early = await send(h, { event: "after_accountsuspend", account: account() });
    expect(early.status).toBe(409);
    const bad = await send(h, { event: "after_accountcreate", account: { ...account({ cycle: "d" }), ip: "not-an-ip" }, client: {} });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toMatchObject({
      "service.billing_cycle": [expect.stringContaining('HostBill billing cycle "d"')],
      "service.ip": [expect.any(String)],
    });
    const noEmail = await send(h, { event: "after_accountcreate", account: account(), client: {} });
    expect(noEmail.status).toBe(422);
    expect(noEmail.body.errors).toEqual({ "service.customer.email": [expect.stringContaining("is required")] });
    const noType = await h.post("/webhooks/hostbill", "{}", { ...hostbillHeaders("{}"), "content-type": "text/plain" });
    expect(noType.status).toBe(415);
    const huge = JSON.stringify({ event: "after_accountcreate", pad: "x".repeat(70 * 1024) });
    expect((await h.post("/webhooks/hostbill", huge, hostbillHeaders(huge))).status).toBe(413);
    expect((await h.post("/webhooks/hostbill", "{not json", hostbillHeaders("{not json"))).status).toBe(400);
  });

  it("keeps the routes of unconfigured adapters hidden (404)", async () => {
    const h = harness();
    expect((await h.post("/webhooks/upmind", "{}", { "content-type": "application/json" })).status).toBe(404);
    expect((await h.post("/webhooks/blesta/whatever", "{}", { "content-type": "application/json" })).status).toBe(404);
  });
});

describe("HostBill adapter with a field-map override", () => {
  const dir = mkdtempSync(join(tmpdir(), "lb-maps-"));
  const mapsFile = join(dir, "maps.json");
  writeFileSync(mapsFile, JSON.stringify({ hostbill: { "service.ip": ["account.customfields[name=Licence IP].value"] } }));
  const harness = useAdapterHarness({ HOSTBILL_WEBHOOK_SECRET: HOSTBILL_SECRET, ADAPTER_FIELD_MAPS_FILE: mapsFile });

  it("reads the IP from where the file says, not from the default path", async () => {
    const h = harness();
    const licenceIp = freshIp();
    const acc = { ...account(), customfields: [{ name: "Hostname", value: "x.example" }, { name: "Licence IP", value: licenceIp }] };
    const res = await send(h, { event: "after_accountcreate", account: acc, client });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await waitStatus(h.bridge, acc.id, "active");
    expect(upstreamCalls(h.sb, "register").map((c) => c.params.ip)).toEqual([licenceIp]);
    expect(h.bridge.service.services.get(acc.id)?.ip).toBe(licenceIp);
  });
});
