import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify as formOf } from "qs";
import { describe, expect, it } from "vitest";
import { untilIdle, sleep, upstreamCalls, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { freshIp, HOSTBILL_SECRET, hostbillHeaders, numericId, useAdapterHarness, type AdapterHarness } from "./helpers.js";
import { usePanelApi } from "./panel-api.js";

/**
 * HostBill's WebHooks plugin as HostBill documents it (docs "WebHooks"; the shipped hook samples):
 * the hook's own `$details` with no envelope, as JSON or a form (its default), the hook's name
 * in HB-Event, HB-Signature = hex HMAC-SHA256 of HB-Timestamp + raw body.
 */

/** An account as HostBill's account hooks carry it (`service` of after_accountcreate). */
function account(over: { id?: string; product_id?: string; cycle?: string; ip?: string; client_id?: string } = {}) {
  return {
    id: over.id ?? numericId(),
    client_id: over.client_id ?? "77",
    product_id: over.product_id ?? "12",
    billingcycle: over.cycle ?? "Monthly",
    domain: "server1.example.com",
    ip: over.ip ?? freshIp(),
    status: "Active",
    next_due: "2026-03-01",
  };
}
type Account = ReturnType<typeof account>;

/** after_accountcreate's `$details`: {service, account_id, server}. */
const createHook = (acc: Account) => ({ service: acc, account_id: Number(acc.id), server: { id: 1, name: "licences" } });

async function send(h: AdapterHarness, event: string, body: unknown, o: Parameters<typeof hostbillHeaders>[1] & { form?: boolean } = {}) {
  // A bare value ($details is just the account id) is posted as it is.
  const raw = o.form ? (typeof body === "object" ? formOf(body) : String(body)) : JSON.stringify(body);
  const headers: Record<string, string> = { ...hostbillHeaders(raw, o), "HB-Event": event, "HB-Hook": "1" };
  if (o.form) headers["content-type"] = "application/x-www-form-urlencoded";
  return h.post("/webhooks/hostbill", raw, headers);
}

async function created(h: AdapterHarness, over: Parameters<typeof account>[0] = {}) {
  const acc = account(over);
  const res = await send(h, "after_accountcreate", createHook(acc));
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  await waitStatus(h.bridge, acc.id, "active");
  return acc;
}

const CLIENT = { id: "77", email: "ann@example.com", firstname: "Ann", lastname: "Example" };

describe("HostBill adapter, with HostBill's admin API for what hooks lack", () => {
  const api = usePanelApi((req) => (req.form.call === "getClientDetails" && req.form.id === "77" ? { success: true, client: CLIENT } : undefined));
  const harness = useAdapterHarness(() => ({
    HOSTBILL_WEBHOOK_SECRET: HOSTBILL_SECRET,
    HOSTBILL_API_URL: `${api().url}/admin/api.php`,
    HOSTBILL_API_ID: "api-id",
    HOSTBILL_API_KEY: "api-key-secret",
  }));

  it("accepts a signed after_accountcreate (202), reads the client's e-mail from the API, registers once", async () => {
    const h = harness();
    const acc = account({ cycle: "m" });
    const res = await send(h, "after_accountcreate", createHook(acc));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toEqual({ event_id: expect.any(String), status: "accepted" });
    await waitStatus(h.bridge, acc.id, "active");
    expect(upstreamCalls(h.sb, "register").filter((c) => c.params.ip === acc.ip).map((c) => c.params)).toEqual([{ ip: acc.ip, type: "cpanel", billingcycle: 1 }]);
    expect(h.sb.sandbox.ledger().filter((c) => c.ip === acc.ip)).toEqual([expect.objectContaining({ op: "register", months: 1 })]);
    expect(await h.bridge.service.services.get(acc.id)).toMatchObject({ customer_email: "ann@example.com", customer_name: "Ann Example", billing_cycle: "monthly" });
    expect(api().requests.at(-1)).toMatchObject({ method: "POST", path: "/admin/api.php", form: { api_id: "api-id", api_key: "api-key-secret", call: "getClientDetails", id: "77" } });
  });

  it("reads the plugin's default encoding, a form (service[id]=...), as well as JSON", async () => {
    const h = harness();
    const acc = account({ cycle: "Annually", product_id: "17" });
    const res = await send(h, "after_accountcreate", createHook(acc), { form: true });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await waitStatus(h.bridge, acc.id, "active");
    expect(h.sb.sandbox.ledger().filter((c) => c.ip === acc.ip)).toEqual([expect.objectContaining({ type: "cloudlinux", months: 12 })]);
  });

  it("answers a repeated delivery with 200 duplicate and buys nothing more", async () => {
    const h = harness();
    const acc = account();
    const raw = JSON.stringify(createHook(acc));
    const headers = { ...hostbillHeaders(raw), "HB-Event": "after_accountcreate" };
    const first = await h.post("/webhooks/hostbill", raw, headers);
    expect(first.status).toBe(202);
    await waitStatus(h.bridge, acc.id, "active");
    await untilIdle(h.bridge);
    const again = await h.post("/webhooks/hostbill", raw, headers);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ event_id: first.body.event_id, status: "duplicate" });
    await sleep(150);
    expect(h.sb.sandbox.ledger().filter((c) => c.ip === acc.ip)).toHaveLength(1);
    expect(await h.events("hostbill", acc.id)).toHaveLength(1);
  });

  it("refuses a wrong or missing signature, a tampered body and a stale timestamp with 401, storing nothing", async () => {
    const h = harness();
    const before = await h.eventCount();
    const acc = account();
    expect((await send(h, "after_accountcreate", createHook(acc), { secret: "not-the-secret-0123456789" })).status).toBe(401);
    const raw = JSON.stringify(createHook(acc));
    expect((await h.post("/webhooks/hostbill", raw, { "content-type": "application/json", "HB-Event": "after_accountcreate", "HB-Timestamp": "1" })).status).toBe(401);
    const tampered = await h.post("/webhooks/hostbill", raw.replace(acc.ip, "203.0.113.250"), { ...hostbillHeaders(raw), "HB-Event": "after_accountcreate" });
    expect(tampered.status).toBe(401);
    const old = await send(h, "after_accountcreate", createHook(acc), { nowMs: Date.now() - 6 * 60_000 });
    expect(old.status).toBe(401);
    expect(old.body.error).toMatch(/too old/);
    expect(await h.eventCount()).toBe(before);
    expect(await h.bridge.service.services.get(acc.id)).toBeUndefined();
  });

  it("suspends on after_accountsuspend (a bare account id) and unsuspends on after_accountunsuspend (either shape)", async () => {
    const h = harness();
    const acc = await created(h);
    expect((await send(h, "after_accountsuspend", Number(acc.id))).status).toBe(202);
    await waitStatus(h.bridge, acc.id, "suspended");
    expect((await send(h, "after_accountunsuspend", { account: acc, product: { id: acc.product_id } })).status).toBe(202);
    await waitStatus(h.bridge, acc.id, "active");
    // The 2021 samples' shape: the bare id again, this time as the form the plugin posts by default.
    expect((await send(h, "after_accountsuspend", acc.id, { form: true, nowMs: Date.now() + 2_000 })).status).toBe(202);
    await waitStatus(h.bridge, acc.id, "suspended");
    expect(upstreamCalls(h.sb, "suspend", "unsuspend").filter((c) => c.params.ip === acc.ip).map((c) => c.op)).toEqual(["suspend", "unsuspend", "suspend"]);
  });

  it("terminates on after_accountterminate ({service, account_id, server})", async () => {
    const h = harness();
    const acc = await created(h);
    // The account as terminated: the creation's very bytes in the same second would be that delivery again (HB-Event is not signed).
    expect((await send(h, "after_accountterminate", createHook({ ...acc, status: "Terminated" }))).status).toBe(202);
    await waitStatus(h.bridge, acc.id, "terminated");
  });

  it("moves a LiteSpeed licence's cores on after_accountchangepackage ({account, product}: 13 → 15)", async () => {
    const h = harness();
    const acc = await created(h, { product_id: "13" });
    await waitFor(async () => (await h.bridge.service.services.get(acc.id))?.upstream_variant === "litespeed4");
    const res = await send(h, "after_accountchangepackage", { account: { ...acc, product_id: "15" }, product: { id: "15", name: "LiteSpeed 8" } });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await waitFor(async () => (await h.bridge.service.services.get(acc.id))?.variant === "litespeed8", 10_000, "variant litespeed8");
    expect(upstreamCalls(h.sb, "change-core").filter((c) => c.params.ip === acc.ip).map((c) => c.params.new_type)).toEqual(["litespeed4", "litespeed8"]);
  });

  it("turns after_invoicefullpaid (items at the top level) into service.renewed for the licence it pays, ignoring other accounts", async () => {
    const h = harness();
    const acc = await created(h);
    const invoice = {
      id: numericId(),
      status: "Paid",
      client_id: "77",
      total: "10.00",
      items: [
        { id: "1", type: "Hosting", item_id: acc.id, next_due: "2026-05-01" },
        { id: "2", type: "Hosting", item_id: "999999" },
        { id: "3", type: "Domain Register", item_id: "55" },
      ],
    };
    const res = await send(h, "after_invoicefullpaid", invoice);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.events).toEqual([
      expect.objectContaining({ type: "service.renewed", webhook_id: `invoice:${invoice.id}:${acc.id}`, status: "accepted" }),
      expect.objectContaining({ type: "service.renewed", webhook_id: `invoice:${invoice.id}:999999`, status: "ignored" }),
    ]);
    await waitFor(async () => (await h.bridge.service.services.get(acc.id))?.paid_until === Date.parse("2026-05-01"), 10_000, "paid_until 2026-05-01");
    // A re-signed retry of the same invoice is a duplicate: keyed by invoice and account, not by timestamp.
    const again = await send(h, "after_invoicefullpaid", invoice, { nowMs: Date.now() + 2000 });
    expect(again.status).toBe(200);
    expect(again.body.status).toBe("duplicate");
  });

  it("answers 200 ignored for hooks it does not act on and accounts that are not licences", async () => {
    const h = harness();
    const other = await send(h, "after_clientadded", { id: 5, email: "x@example.com" });
    expect(other.body).toEqual({ status: "ignored", reason: expect.stringContaining("after_clientadded") });
    const hosting = account({ product_id: "999" });
    const notLicense = await send(h, "after_accountcreate", createHook(hosting));
    expect(notLicense.body).toEqual({ status: "ignored", reason: expect.stringContaining("999") });
    expect(await h.events("hostbill", hosting.id)).toEqual([]);
  });

  it("answers 409 for an account it has never seen, 422 naming what is wrong, 415/413/400 for bodies it cannot read", async () => {
    const h = harness();
    expect((await send(h, "after_accountsuspend", 987_654)).status).toBe(409);
    const bad = await send(h, "after_accountcreate", createHook({ ...account({ cycle: "d" }), ip: "not-an-ip" }));
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toMatchObject({ "service.billing_cycle": [expect.stringContaining('HostBill billing cycle "d"')], "service.ip": [expect.any(String)] });
    const noEvent = await h.post("/webhooks/hostbill", "{}", hostbillHeaders("{}"));
    expect(noEvent.status).toBe(422);
    expect(noEvent.body.errors).toEqual({ event: [expect.stringContaining("HB-Event")] });
    expect((await h.post("/webhooks/hostbill", "{}", { ...hostbillHeaders("{}"), "content-type": "text/plain" })).status).toBe(415);
    const huge = JSON.stringify({ pad: "x".repeat(70 * 1024) });
    expect((await h.post("/webhooks/hostbill", huge, hostbillHeaders(huge))).status).toBe(413);
    expect((await h.post("/webhooks/hostbill", "{not json", { ...hostbillHeaders("{not json"), "HB-Event": "after_accountcreate" })).status).toBe(400);
  });

  it("keeps the routes of unconfigured adapters hidden (404)", async () => {
    const h = harness();
    expect((await h.post("/webhooks/upmind", "{}", { "content-type": "application/json" })).status).toBe(404);
    expect((await h.post("/webhooks/blesta/whatever", "{}", { "content-type": "application/json" })).status).toBe(404);
  });
});

describe("HostBill adapter without its API", () => {
  const harness = useAdapterHarness({ HOSTBILL_WEBHOOK_SECRET: HOSTBILL_SECRET });

  it("still buys the licence when no hook carries an e-mail, and the history says why no mail was sent", async () => {
    const h = harness();
    const acc = account();
    const res = await send(h, "after_accountcreate", createHook(acc));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body.notes).toEqual([expect.stringContaining("HOSTBILL_API_URL")]);
    await waitStatus(h.bridge, acc.id, "active");
    await untilIdle(h.bridge);
    expect((await h.bridge.service.services.get(acc.id))?.customer_email).toBeNull();
    expect(await h.bridge.service.queue.list({ serviceId: acc.id, kind: "mail_install" })).toEqual([]);
    expect((await h.bridge.service.services.history(acc.id)).map((e) => e.action)).toContain("install mail not sent");
  });
});

describe("HostBill adapter with a field-map override", () => {
  const dir = mkdtempSync(join(tmpdir(), "lb-maps-"));
  const mapsFile = join(dir, "maps.json");
  writeFileSync(mapsFile, JSON.stringify({ hostbill: { "service.ip": ["service.customfields[name=Licence IP].value"] } }));
  const harness = useAdapterHarness({ HOSTBILL_WEBHOOK_SECRET: HOSTBILL_SECRET, ADAPTER_FIELD_MAPS_FILE: mapsFile });

  it("reads the IP from where the file says, not from the default path", async () => {
    const h = harness();
    const licenseIp = freshIp();
    const acc = { ...account(), customfields: [{ name: "Hostname", value: "x.example" }, { name: "Licence IP", value: licenseIp }] };
    const res = await send(h, "after_accountcreate", createHook(acc));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await waitStatus(h.bridge, acc.id, "active");
    expect(upstreamCalls(h.sb, "register").map((c) => c.params.ip)).toEqual([licenseIp]);
    expect((await h.bridge.service.services.get(acc.id))?.ip).toBe(licenseIp);
  });
});

/**
 * HB-Signature covers HB-Timestamp and the body only: within the five minutes a captured delivery
 * can be posted again with any other header. What those headers say must change nothing.
 */
describe("HostBill replays: headers the signature does not cover decide nothing", () => {
  const harness = useAdapterHarness({ HOSTBILL_WEBHOOK_SECRET: HOSTBILL_SECRET });

  /** One signed delivery, as captured: its bytes and its signed headers, to post again with other unsigned ones. */
  function signed(event: string, body: unknown) {
    const raw = JSON.stringify(body);
    const headers: Record<string, string> = { ...hostbillHeaders(raw), "HB-Event": event, "HB-Hook": "1" };
    return { raw, headers, post: (h: AdapterHarness, extra: Record<string, string> = {}) => h.post("/webhooks/hostbill", raw, { ...headers, ...extra }) };
  }

  /** What the operator sees of a service: its row and history (admin API), its jobs and its events. */
  async function observed(h: AdapterHarness, serviceId: string) {
    const admin = await h.bridge.admin(`/admin/services/${serviceId}`);
    expect(admin.status).toBe(200);
    const { history, ...row } = admin.body as { history: { action: string }[] } & Record<string, unknown>;
    const jobs = (await h.bridge.service.queue.list({ serviceId })).map((j) => j.kind);
    return { row, history: history.map((e) => e.action), jobs, events: await h.events("hostbill", serviceId) };
  }

  it("a signed delivery re-sent with a new delivery-id header is a duplicate: no new event, job or history", async () => {
    const h = harness();
    const acc = account();
    const delivery = signed("after_accountcreate", createHook(acc));
    const first = await delivery.post(h, { "HB-Delivery-Id": "hb-1" });
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    await waitStatus(h.bridge, acc.id, "active");
    await untilIdle(h.bridge);
    const before = await observed(h, acc.id);
    for (const header of ["HB-Delivery-Id", "HB-Delivery", "HB-Event-Id"]) {
      const again = await delivery.post(h, { [header]: `hb-replay-${header}` });
      expect(again.status, header).toBe(200);
      expect(again.body).toMatchObject({ event_id: first.body.event_id, status: "duplicate" });
    }
    expect(await observed(h, acc.id)).toEqual(before);
    expect(before.events).toHaveLength(1);
  });

  it("a signed delivery re-sent with another HB-Event is refused (409 naming HB-Event): the service is not terminated", async () => {
    const h = harness();
    const acc = account();
    const delivery = signed("after_accountcreate", createHook(acc));
    expect((await delivery.post(h)).status).toBe(202);
    await waitStatus(h.bridge, acc.id, "active");
    await untilIdle(h.bridge);
    const before = await observed(h, acc.id);
    for (const event of ["after_accountterminate", "after_accountsuspend", "after_accountunsuspend"]) {
      const swapped = await delivery.post(h, { "HB-Event": event, "HB-Delivery-Id": `swap-${event}` });
      expect(swapped.status, event).toBe(409);
      expect(swapped.body).toMatchObject({ code: "conflict", errors: { "HB-Event": [expect.stringContaining("service.created")] } });
    }
    expect(await observed(h, acc.id)).toEqual(before);
    expect(before.row.status).toBe("active");
    expect(upstreamCalls(h.sb, "suspend").filter((c) => c.params.ip === acc.ip)).toEqual([]);
  });

  it("a signed after_invoicefullpaid re-sent five times with new delivery ids moves paid_until once", async () => {
    const h = harness();
    const acc = await created(h);
    // No next_due on the item: each recorded payment would add one cycle to paid_until.
    const invoice = { id: numericId(), status: "Paid", client_id: "77", total: "10.00", items: [{ id: "1", type: "Hosting", item_id: acc.id }] };
    const delivery = signed("after_invoicefullpaid", invoice);
    const first = await delivery.post(h, { "HB-Delivery-Id": "inv-0" });
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    const once = new Date(Date.UTC(2026, 3, 1)).toISOString();
    await waitFor(async () => (await observed(h, acc.id)).row.paid_until === once, 10_000, `paid_until ${once}`);
    await untilIdle(h.bridge);
    const before = await observed(h, acc.id);
    for (let i = 1; i <= 5; i++) {
      const again = await delivery.post(h, { "HB-Delivery-Id": `inv-${i}` });
      expect(again.status, `replay ${i}`).toBe(200);
      expect(again.body).toEqual({ event_id: first.body.event_id, status: "duplicate" });
    }
    const after = await observed(h, acc.id);
    expect(after).toEqual(before);
    expect(after.row.paid_until).toBe(once);
    expect(after.jobs.filter((k) => k === "record_payment")).toHaveLength(1);
  });

  it("takes the event from the signed body when it names one, and refuses an HB-Event header that contradicts it (422)", async () => {
    const h = harness();
    const acc = await created(h);
    const body = { event: "after_accountsuspend", account_id: acc.id };
    const contradicted = await signed("after_accountterminate", body).post(h);
    expect(contradicted.status).toBe(422);
    expect(contradicted.body.errors).toEqual({ "HB-Event": [expect.stringContaining("after_accountsuspend")] });
    expect((await observed(h, acc.id)).events).toHaveLength(1);
    // The body's event, with or without a header that agrees with it.
    expect((await h.post("/webhooks/hostbill", JSON.stringify(body), hostbillHeaders(JSON.stringify(body)))).status).toBe(202);
    await waitStatus(h.bridge, acc.id, "suspended");
  });

  it("refuses an invoice re-sent as an account hook (422): its id is not an account to terminate", async () => {
    const h = harness();
    const acc = await created(h);
    // An invoice whose number happens to be the account's id: read as an account hook, it would name that account.
    const invoice = { id: acc.id, status: "Paid", client_id: "77", total: "10.00", items: [{ id: "1", type: "Domain Register", item_id: "55" }] };
    const delivery = signed("after_invoicefullpaid", invoice);
    expect((await delivery.post(h)).body).toMatchObject({ status: "ignored" });
    const swapped = await delivery.post(h, { "HB-Event": "after_accountterminate" });
    expect(swapped.status).toBe(422);
    expect(swapped.body.errors).toEqual({ "HB-Event": [expect.stringContaining("invoice")] });
    await untilIdle(h.bridge);
    const after = await observed(h, acc.id);
    expect(after.row.status).toBe("active");
    expect(after.jobs).not.toContain("terminate");
  });
});
