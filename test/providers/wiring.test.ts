import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { createdEvent, startBridgeWithEnv, TEST_ADMIN_TOKEN, TEST_PROVISIONING_TOKEN, TEST_SECRET, type TestBridge } from "../helpers/bridge.js";
import { untilIdle, waitForBridge, waitStatus } from "../helpers/e2e-harness.js";
import { runCli } from "../cli/helpers.js";
import { orderActiveOf, useProviderBridges } from "../helpers/providers.js";

/**
 * The providers as the service is built with them (service-contract.md section 12): every
 * configured provider in the registry, each buying what its products name; no reseller when
 * none is configured, and no sandbox ever started in live mode; in sandbox mode each provider a
 * sandbox of its own in the process; credentials rotated by a reload.
 */

const dataDirOf = (bridge: TestBridge) => resolve(bridge.config.dataDir);

describe("a bridge configured with the reseller, Manage2 and CLN", () => {
  const start = useProviderBridges();

  it("buys each product from its own provider", async () => {
    const { sbs, bridge } = await start();
    await orderActiveOf(bridge, "12", "203.0.113.10");
    const m2 = await orderActiveOf(bridge, "40", "203.0.113.11");
    await orderActiveOf(bridge, "41", "203.0.113.12");

    expect(sbs.reseller.sandbox.ledger()).toMatchObject([{ op: "register", ip: "203.0.113.10", type: "cpanel" }]);
    expect(sbs.manage2.ledger()).toMatchObject([{ op: "add", ip: "203.0.113.11", packageid: 12345, groupid: 678 }]);
    expect(sbs.cln.ledger()).toMatchObject([{ op: "register", ip: "203.0.113.12", type: 1 }]);
    expect(await bridge.service.services.get(m2)).toMatchObject({ provider: "manage2", sku: "12345" });
  });

  it("a reload with a new Manage2 password and CLN secret key uses them from the next call", async () => {
    const { sbs, bridge } = await start({ env: { MANAGE2_PASSWORD: "not-the-password", CLN_SECRET_KEY: "not-the-key" } });
    const m2 = createdEvent({ product_id: "40", ip: "203.0.113.13" });
    const cln = createdEvent({ product_id: "41", ip: "203.0.113.14" });
    await bridge.send(m2);
    await bridge.send(cln);
    const blocked = await waitForBridge(bridge, async () => {
      const jobs = (await bridge.service.queue.list({ state: "blocked" })).filter((j) => j.kind === "register");
      return jobs.length === 2 && jobs;
    });

    bridge.service.reload(loadConfig({ env: { ...bridge.env, MANAGE2_PASSWORD: "sandbox-manage2-password", CLN_SECRET_KEY: "sandbox-cln-secret-key" }, cwd: process.cwd() }));
    for (const job of blocked) expect((await bridge.admin(`/admin/jobs/${job.id}/retry`, { method: "POST" })).status).toBe(202);

    await waitStatus(bridge, m2.service.id, "active");
    await waitStatus(bridge, cln.service.id, "active");
    expect(sbs.manage2.ledger()).toHaveLength(1);
    expect(sbs.cln.ledger()).toHaveLength(1);
  });
});

describe("a live bridge with no reseller configured", () => {
  const start = useProviderBridges();

  it("starts no reseller sandbox, and buys from Manage2 and CLN", async () => {
    const { sbs, bridge } = await start({ withoutReseller: true });
    expect(bridge.config.upstream).toEqual({ mode: "none" });

    await orderActiveOf(bridge, "40", "203.0.113.20");
    await orderActiveOf(bridge, "41", "203.0.113.21");

    expect(existsSync(join(dataDirOf(bridge), "sandbox-upstream.json"))).toBe(false);
    expect(existsSync(join(dataDirOf(bridge), "sandbox-state.json"))).toBe(false);
    expect(sbs.reseller.sandbox.requests()).toEqual([]);
    expect(sbs.manage2.ledger()).toHaveLength(1);
    expect(sbs.cln.ledger()).toHaveLength(1);
  });

  it("is ready with its providers reachable, and says the reseller balance is unknown because there is no reseller", async () => {
    const { sbs, bridge } = await start({ withoutReseller: true });
    const ready = await fetch(`${bridge.url}/readyz`);
    const body = (await ready.json()) as { status: string; checks: Record<string, { status: string; urls?: string[] }> };
    expect(ready.status).toBe(200);
    expect(body.checks).toMatchObject({ upstream: { status: "ok" }, manage2: { status: "ok" }, cln: { status: "ok" } });
    expect(body.checks.upstream!.urls).toBeUndefined();
    expect(sbs.manage2.requests().length + sbs.cln.requests().length).toBeGreaterThan(0);

    const balance = await bridge.admin("/admin/balance");
    expect(balance.body).toMatchObject({ balance: null, reason: expect.stringMatching(/no reseller is configured/) });
    expect(await (await fetch(`${bridge.url}/metrics`)).text()).not.toMatch(/^license_bridge_reseller_balance/m);
  });

  it("the CLI's reseller commands say there is no reseller, and never look for a sandbox", async () => {
    const { bridge } = await start({ withoutReseller: true });
    const run = await runCli(["reseller", "balance", "1"], bridge.env);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/no reseller is configured/);
    expect(run.stderr).not.toMatch(/sandbox/);
  });
});

describe("sandbox mode: every provider an in-process sandbox of its own", () => {
  let bridge: TestBridge | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await bridge?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    bridge = dir = undefined;
  });

  it("buys the providers' example products from sandboxes it started, and leaves their addresses for the CLI", async () => {
    dir = mkdtempSync(join(tmpdir(), "lb-sandbox-providers-"));
    // The credentials sandbox mode generates, written first so the test's signed webhooks match.
    writeFileSync(join(dir, "sandbox-credentials.json"), JSON.stringify({ webhook_secret: TEST_SECRET, admin_token: TEST_ADMIN_TOKEN, provisioning_token: TEST_PROVISIONING_TOKEN }));
    bridge = await startBridgeWithEnv(
      {
        HOST: "127.0.0.1",
        PORT: "0",
        DATABASE_PATH: join(dir, "bridge.db"),
        LOG_LEVEL: "silent",
        PRODUCTS_FILE: resolve(import.meta.dirname, "../../config/products.providers.json"),
      },
      dir,
      { dir },
    );
    expect(bridge.config.sandbox).toBe(true);
    const ids = [await orderActiveOf(bridge, "40", "203.0.113.30"), await orderActiveOf(bridge, "41", "203.0.113.31"), await orderActiveOf(bridge, "12", "203.0.113.32")];
    await untilIdle(bridge);

    expect((await Promise.all(ids.map((id) => bridge!.service.services.get(id)))).map((s) => s?.provider)).toEqual(["manage2", "cln", "reseller"]);
    for (const [file, state] of [
      ["sandbox-manage2.json", "manage2-sandbox-state.json"],
      ["sandbox-cln.json", "cln-sandbox-state.json"],
    ] as const) {
      const pointer = JSON.parse(readFileSync(join(dir, file), "utf8")) as { url: string; pid: number };
      expect(pointer).toMatchObject({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), pid: process.pid });
      expect(existsSync(join(dir, state))).toBe(true);
    }
    const m2State = JSON.parse(readFileSync(join(dir, "manage2-sandbox-state.json"), "utf8")) as { licenses: { ip: string }[] };
    expect(m2State.licenses).toMatchObject([{ ip: "203.0.113.30" }]);
  });

  it("forecasts a Manage2 or CLN renewal at the catalogue's price_per_month, not the reseller sandbox's price of its type", async () => {
    dir = mkdtempSync(join(tmpdir(), "lb-sandbox-providers-"));
    writeFileSync(join(dir, "sandbox-credentials.json"), JSON.stringify({ webhook_secret: TEST_SECRET, admin_token: TEST_ADMIN_TOKEN, provisioning_token: TEST_PROVISIONING_TOKEN }));
    const env = { HOST: "127.0.0.1", PORT: "0", DATABASE_PATH: join(dir, "bridge.db"), LOG_LEVEL: "silent", PRODUCTS_FILE: resolve(import.meta.dirname, "../../config/products.providers.json"), RENEWAL_LEAD_DAYS: "40" };
    bridge = await startBridgeWithEnv(env, dir, { dir });
    const inAYear = new Date(Date.now() + 365 * 86_400_000).toISOString().slice(0, 10);
    const manage2 = createdEvent({ product_id: "40", ip: "203.0.113.33", next_due_date: inAYear });
    const cln = createdEvent({ product_id: "42", ip: "203.0.113.34", next_due_date: inAYear });
    for (const event of [manage2, cln]) {
      await bridge.send(event);
      await waitStatus(bridge, event.service.id, "active");
    }

    const forecast = await bridge.admin("/admin/forecast?days=7");
    expect(forecast.body.due).toEqual(
      expect.arrayContaining([expect.objectContaining({ service_id: manage2.service.id, cost: 15 }), expect.objectContaining({ service_id: cln.service.id, cost: 4 })]),
    );
  });
});
