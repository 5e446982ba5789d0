import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { loadConfig, type Config } from "../../src/config/load.js";
import { silentLogger } from "../../src/log/logger.js";
import { startService, type RunningService } from "../../src/compose/service.js";
import { SHORTFALL_ALERT_KEY } from "../../src/renewals/forecast.js";
import { DEFAULT_SANDBOX_TOKENS } from "../../src/vocabulary/sandbox-identity.js";
import { signWebhook } from "../../src/webhooks/signature.js";
import { createdEvent, idle, uniqueId, uniqueIp, type TestBridge } from "../helpers/bridge.js";
import { usePairPerFile, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";

/**
 * The forecast (issue 26): GET /admin/forecast in sandbox mode, where the costs come from the
 * sandbox's price list and the balance from its own reseller. Its numbers are checked against
 * what the sandbox then charges when the sweep renews. Sandbox mode is SQLite only (it takes no
 * DATABASE_URL), so this file is not among the BOTH_STORES suites.
 */

const DAY = 86_400_000;
const LEAD_DAYS = 3;

interface ForecastBody {
  days: number;
  balance: number | null;
  due: { service_id: string; ip: string; type: string; due_at: string; cost: number | null }[];
  total_cost: number | null;
  shortfall: number | null;
}

interface Charge {
  op: string;
  ip: string;
  type: string;
  months: number;
  amount: number;
}

describe("GET /admin/forecast in sandbox mode", () => {
  const clock = manualClock(Date.now());
  let dir: string;
  let config: Config;
  let service: RunningService;
  const ids = { monthly: uniqueId("fc-monthly"), bundle: uniqueId("fc-bundle"), unpaid: uniqueId("fc-unpaid") };
  const ips = { monthly: uniqueIp(), bundle: uniqueIp(), unpaid: uniqueIp() };

  const admin = async <T = ForecastBody>(path: string): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${config.ADMIN_TOKEN[0]}` } });
    return { status: res.status, body: (await res.json()) as T };
  };
  const sandbox = async (path: string, body?: unknown) => {
    const res = await fetch(`${service.reseller.sandbox!.url}/_sandbox${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${DEFAULT_SANDBOX_TOKENS.admin}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await res.json()) as Record<string, unknown>;
  };
  const send = async (event: unknown) => {
    const body = JSON.stringify(event);
    const res = await fetch(`${service.url}/webhooks/billing`, {
      method: "POST",
      headers: { "content-type": "application/json", ...signWebhook(config.WEBHOOK_SECRETS[0]!, uniqueId(), body, Date.now()) },
      body,
    });
    expect(res.status).toBe(202);
  };
  const expiresAt = async (id: string) => (await service.services.get(id))!.expires_at!;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "lb-forecast-"));
    config = loadConfig({ env: { HOST: "127.0.0.1", PORT: "0", DATABASE_PATH: join(dir, "bridge.db"), LOG_LEVEL: "silent" }, cwd: process.cwd() });
    expect(config.upstream.mode).toBe("sandbox");
    service = await startService({ config, logger: silentLogger(), clock, renewalSchedule: false, pollMs: 50, baseDelayMs: 40 });
    const paidAYear = new Date(Date.now() + 365 * DAY).toISOString().slice(0, 10);
    await send(createdEvent({ id: ids.monthly, ip: ips.monthly, product_id: "12", next_due_date: paidAYear }));
    await send(createdEvent({ id: ids.bundle, ip: ips.bundle, product_id: "20", next_due_date: paidAYear }));
    // Not paid beyond its first term: the sweep never renews it.
    await send(createdEvent({ id: ids.unpaid, ip: ips.unpaid, product_id: "12" }));
    await waitFor(async () => (await Promise.all(Object.values(ids).map((id) => service.services.get(id)))).every((s) => s?.status === "active"), 10_000, "the orders");
  });

  afterAll(async () => {
    await service?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("nothing is due this week right after the orders; the balance is the sandbox's", async () => {
    const res = await admin("/admin/forecast");
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ days: 7, due: [], total_cost: 0, shortfall: 0, prices: "sandbox", unpriced_products: [], balance: await sandbox("/balance").then((b) => b.balance) });
  });

  it("refuses a days it cannot use, naming the field", async () => {
    for (const days of ["0", "367", "abc", "1e2", "-3"]) {
      const res = await admin<Record<string, unknown>>(`/admin/forecast?days=${days}`);
      expect(res.status, days).toBe(422);
      expect(res.body).toMatchObject({ code: "validation", field: "days", errors: { days: [expect.stringContaining("1 to 366")] } });
    }
  });

  it("lists the renewals the sweep will buy in the window at the sandbox's prices, which is what the sandbox then charges", async () => {
    // 25 days on: both paid licences end within the week plus the lead days, the unpaid one too but it is not paid.
    clock.advance(25 * DAY);
    const terms = { monthly: await expiresAt(ids.monthly), bundle: await expiresAt(ids.bundle) };
    const res = await admin("/admin/forecast?days=7");
    expect(res.status).toBe(200);
    const expected = [
      { service_id: ids.monthly, provider: "reseller", ip: ips.monthly, type: "cpanel", due_at: new Date(terms.monthly - LEAD_DAYS * DAY).toISOString(), cost: 15 },
      // A bundle is renewed licence by licence: cPanel (15) and CloudLinux (12) a month.
      { service_id: ids.bundle, provider: "reseller", ip: ips.bundle, type: "cpanel-cloudlinux", due_at: new Date(terms.bundle - LEAD_DAYS * DAY).toISOString(), cost: 27 },
    ].sort((a, b) => a.due_at.localeCompare(b.due_at) || a.service_id.localeCompare(b.service_id));
    expect(res.body.due).toEqual(expected);
    expect(res.body.total_cost).toBe(42);
    const balance = (await sandbox("/balance")).balance as number;
    expect(res.body).toMatchObject({ balance, shortfall: Math.max(0, 42 - balance), prices: "sandbox" });

    // The sweep, once they are due, buys exactly that.
    clock.advance(5 * DAY);
    await service.sweep.sweep();
    await waitFor(() => idle(service), 10_000, "the renewals");
    const renewals = ((await sandbox("/ledger")).charges as Charge[]).filter((c) => c.op === "renew");
    const charged = (ip: string) => renewals.filter((c) => c.ip === ip).reduce((sum, c) => sum + c.amount, 0);
    expect(charged(ips.monthly)).toBe(15);
    expect(charged(ips.bundle)).toBe(27);
    expect(charged(ips.unpaid)).toBe(0);
    expect(await expiresAt(ids.monthly)).toBeGreaterThan(terms.monthly);
  });

  it("alerts while the balance will not cover the next 7 days, and resolves once it does", async () => {
    // Both are due again a month on.
    clock.advance(25 * DAY);
    expect((await admin("/admin/forecast?days=7")).body.due.map((d) => d.service_id).sort()).toEqual([ids.monthly, ids.bundle].sort());
    await sandbox("/balance", { balance: 10 });
    clock.advance(2 * 60_000); // past the balance reading's 60 s
    await service.maintenance();
    const open = await service.alerts.open();
    expect(open.map((a) => a.key)).toContain(SHORTFALL_ALERT_KEY);
    expect((await admin("/admin/forecast?days=7")).body).toMatchObject({ balance: 10, total_cost: 42, shortfall: 32 });

    await sandbox("/balance", { balance: 1000 });
    clock.advance(2 * 60_000);
    await service.maintenance();
    expect((await service.alerts.open()).map((a) => a.key)).not.toContain(SHORTFALL_ALERT_KEY);
  });
});

/**
 * Against a live reseller (here the sandbox behind RESELLER_API_URL, so the bridge loads no
 * sandbox price table) the costs are the catalogue's `price_per_month` times the renewal's
 * months; a due product without a price makes the total unknown and is named.
 */
describe("GET /admin/forecast against a live reseller: the catalogue's prices", () => {
  const catalogueDir = mkdtempSync(join(tmpdir(), "lb-forecast-catalogue-"));
  const productsFile = join(catalogueDir, "products.json");
  writeFileSync(
    productsFile,
    JSON.stringify({
      billing_cycles: { monthly: 1, quarterly: 3 },
      products: { "12": { type: "cpanel", price_per_month: 16.5 }, "30": { type: "directadmin" } },
    }),
  );
  const paidAYear = new Date(Date.now() + 365 * DAY).toISOString().slice(0, 10);
  const ids = { quarterly: uniqueId("fc-live-q"), unpriced: uniqueId("fc-live-none") };
  const pair = usePairPerFile({ env: { PRODUCTS_FILE: productsFile } });
  afterAll(() => rmSync(catalogueDir, { recursive: true, force: true }));

  it("prices a quarterly cPanel at 3 × 16.5, and names the product without a price", async () => {
    const { bridge } = pair();
    expect(bridge.config.sandbox).toBe(false);
    await bridge.send(createdEvent({ id: ids.quarterly, product_id: "12", cycle: "quarterly", next_due_date: paidAYear }));
    const priced = await orderedForecast(bridge, ids.quarterly, 100);
    expect(priced).toMatchObject({ prices: "catalogue", total_cost: 49.5, unpriced_products: [] });
    expect(priced.due).toEqual([expect.objectContaining({ service_id: ids.quarterly, type: "cpanel", cost: 49.5 })]);

    await bridge.send(createdEvent({ id: ids.unpriced, product_id: "30", next_due_date: paidAYear }));
    const unknown = await orderedForecast(bridge, ids.unpriced, 100);
    expect(unknown).toMatchObject({ prices: "catalogue", total_cost: null, shortfall: null, unpriced_products: ["30"] });
    expect(unknown.due.find((d) => d.service_id === ids.unpriced)).toMatchObject({ type: "directadmin", cost: null });
    expect(unknown.due.find((d) => d.service_id === ids.quarterly)).toMatchObject({ cost: 49.5 });
  });
});

/** The forecast over `days`, once the service `id` is active (its first term then ends within the window). */
async function orderedForecast(bridge: TestBridge, id: string, days: number): Promise<ForecastBody & { prices: string; unpriced_products: string[] }> {
  await waitStatus(bridge, id, "active");
  const res = await bridge.admin(`/admin/forecast?days=${days}`);
  expect(res.status).toBe(200);
  return res.body as unknown as ForecastBody & { prices: string; unpriced_products: string[] };
}
