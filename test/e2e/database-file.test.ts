import { mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bridgeEnv, createdEvent, startTestBridge, startTestSandbox, TEST_ADMIN_TOKEN, TEST_PROVISIONING_TOKEN, TEST_SECRET, uniqueId, type TestBridge, type TestSandbox } from "../helpers/bridge.js";
import { freePort, readyz, sendTo, spawnBridge, type ChildBridge } from "../helpers/e2e-child.js";
import { orderActive, untilIdle } from "../helpers/e2e-harness.js";
import { rowsChangedBy } from "../helpers/sqlite.js";
import { systemClock } from "../../src/clock.js";
import { openSqliteStore, type SqliteStore } from "../../src/store/sqlite/store.js";
import { signWebhook } from "../../src/webhooks/signature.js";
import { waitFor } from "../helpers/wait.js";
import { holdUpstream, row } from "../adoption/helpers.js";
import { ConsoleClient, testOperators } from "../console/client.js";

const BLESTA_TOKEN = "blesta-token-0123456789abcdefghijklmnopqrstuv";

/** A Blesta "Services.addAfter" hook for a new service. */
/** Blesta's Webhooks plugin activating a service (Services.editAfter, as the plugin posts it). */
async function blestaAdded(url: string): Promise<Response> {
  const oldService = {
    id: 9001,
    status: "pending",
    pricing_id: 120,
    package: { id: 12 },
    package_pricing: { package_id: 12, term: 1, period: "month" },
    fields: [{ key: "ip", value: "203.0.113.91", serialized: 0, encrypted: 0 }],
  };
  return fetch(`${url}/webhooks/blesta/${BLESTA_TOKEN}`, {
    method: "POST",
    headers: { "content-type": "application/json", "X-Blesta-Event": "Services.editAfter", "X-Webhook-Id": "1" },
    body: JSON.stringify({ service_id: 9001, service_activated: true, vars: { status: "active", pricing_id: 120 }, old_service: oldService }),
  });
}

describe("the database file taken away under a running service", () => {
  let sb: TestSandbox | undefined;
  let dir: string | undefined;
  let child: ChildBridge | undefined;
  afterEach(async () => {
    await child?.kill();
    await sb?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    sb = child = dir = undefined;
  });

  async function start(): Promise<{ url: string; dbPath: string }> {
    sb = await startTestSandbox();
    dir = mkdtempSync(join(tmpdir(), "lb-dbfile-"));
    const env = bridgeEnv(sb.running, dir, { PORT: String(await freePort()), BLESTA_WEBHOOK_TOKEN: BLESTA_TOKEN, BLESTA_ALLOWED_IPS: "127.0.0.1/32", LOG_LEVEL: "error" });
    child = await spawnBridge(env);
    expect((await readyz(child.url)).status).toBe(200);
    return { url: child.url, dbPath: env.DATABASE_PATH! };
  }

  async function expectRefusals(url: string, what: RegExp): Promise<void> {
    const webhook = await sendTo(url, createdEvent());
    expect(webhook.status).toBe(503);
    expect(webhook.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(webhook.body).toEqual({ error: expect.stringMatching(/database/), code: "unavailable" });

    const blesta = await blestaAdded(url);
    expect(blesta.status).toBe(503);
    expect(blesta.headers.get("retry-after")).toMatch(/^\d+$/);

    const ready = await waitFor(async () => {
      const r = await readyz(url);
      return r.status === 503 && r;
    }, 5_000, "/readyz to answer 503");
    expect(ready.body.reasons).toEqual([expect.stringMatching(what)]);
  }

  it("deleted: webhooks are refused with 503 and Retry-After, never 202, and /readyz names the database", async () => {
    const { url, dbPath } = await start();
    rmSync(dbPath);
    await expectRefusals(url, /^database: .*deleted/);
    const logged = child!.output().split("\n").filter((l) => l.includes("database file lost"));
    expect(logged, "one error line, with the path").toEqual([expect.stringContaining(JSON.stringify(dbPath))]);
  });

  it("replaced by another SQLite file: the same", async () => {
    const { url, dbPath } = await start();
    const other = join(dir!, "other.db");
    // Another bridge's database: a valid SQLite file with the same tables, only not this one.
    const store = openSqliteStore(other, { clock: systemClock });
    await store.migrate();
    await store.close();
    renameSync(other, dbPath);
    await expectRefusals(url, /^database: .*replaced/);
  });
});

describe("a store that has lost its file refuses every write", () => {
  let sb: TestSandbox | undefined;
  let bridge: TestBridge | undefined;
  afterEach(async () => {
    await bridge?.close();
    await sb?.close();
    sb = bridge = undefined;
  });

  it("answers every write route 503 with Retry-After (the console as an HTML page) and writes nothing into the orphaned file", async () => {
    sb = await startTestSandbox();
    bridge = await startTestBridge(sb, { env: { BLESTA_WEBHOOK_TOKEN: BLESTA_TOKEN, BLESTA_ALLOWED_IPS: "127.0.0.1/32" }, consoleOperators: testOperators });
    const { url } = bridge;
    const id = await orderActive(bridge, { product_id: "13" });
    await untilIdle(bridge);
    const job = (await bridge.service.queue.list({ serviceId: id }))[0]!;
    // A licence the reseller holds and the bridge does not: what an applied adoption would write.
    await holdUpstream(sb, "203.0.113.81", "cpanel");
    const adoption = [row({ service_identifier: "adopt-me", ip: "203.0.113.81" })];
    const operator = new ConsoleClient(url);
    await operator.login(TEST_ADMIN_TOKEN);
    await operator.get(`/console/licences/${id}`);
    const visitor = new ConsoleClient(url);
    await visitor.get("/console/login");

    rmSync(bridge.config.DATABASE_PATH);
    const store = bridge.service.store as SqliteStore;
    const changed = rowsChangedBy(store);
    const charges = sb.sandbox.ledger().length;

    const webhook = (event: unknown) => {
      const body = JSON.stringify(event);
      return fetch(`${url}/webhooks/billing`, { method: "POST", headers: { "content-type": "application/json", ...signWebhook(TEST_SECRET, uniqueId(), body) }, body });
    };
    const admin = (path: string, body: unknown = {}) =>
      fetch(`${url}${path}`, { method: "POST", headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const provision = (call: string, params: Record<string, string>) =>
      fetch(`${url}/provision/v1/${call}`, {
        method: "POST",
        headers: { authorization: `Bearer ${TEST_PROVISIONING_TOKEN}`, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(params),
      });
    const consolePost = (path: string, fields: Record<string, string> = {}) => operator.post(path, fields);
    type Answer = { status: number; text: string; res: Response };
    const read = async (res: Response): Promise<Answer> => ({ status: res.status, text: await res.text(), res });

    const api: Record<string, () => Promise<Response>> = {
      "webhook service.created": () => webhook(createdEvent()),
      "webhook service.suspended": () => webhook({ type: "service.suspended", service: { id } }),
      "Blesta's webhook": () => blestaAdded(url),
      "provisioning create": () => provision("create", { service_identifier: "prov-1", package_identifier: "12", ip: "203.0.113.82", customer_email: "ann@example.com" }),
      "provisioning suspend": () => provision("suspend", { service_identifier: id }),
      "provisioning renew": () => provision("renew", { service_identifier: id, next_due_date: "2031-01-01" }),
      "provisioning change-ip": () => provision("change-ip", { service_identifier: id, new_ip: "203.0.113.83" }),
      "admin suspend": () => admin(`/admin/services/${id}/suspend`),
      "admin unsuspend": () => admin(`/admin/services/${id}/unsuspend`),
      "admin change-ip": () => admin(`/admin/services/${id}/change-ip`, { ip: "203.0.113.84" }),
      "admin resend-install-mail": () => admin(`/admin/services/${id}/resend-install-mail`),
      "admin reset-ip-changes": () => admin(`/admin/services/${id}/reset-ip-changes`),
      "admin job retry": () => admin(`/admin/jobs/${job.id}/retry`),
      "admin job cancel": () => admin(`/admin/jobs/${job.id}/cancel`),
      "admin reconcile --fix": () => admin("/admin/reconcile", { fix: true }),
      "admin adopt --apply": () => admin("/admin/adopt", { services: adoption, apply: true }),
    };
    const pages: Record<string, () => Promise<Answer>> = {
      "console login": () => visitor.post("/console/login", { token: TEST_ADMIN_TOKEN }),
      "console suspend": () => consolePost(`/console/licences/${id}/suspend`),
      "console unsuspend": () => consolePost(`/console/licences/${id}/unsuspend`),
      "console change-ip": () => consolePost(`/console/licences/${id}/change-ip`, { ip: "203.0.113.85" }),
      "console resend-install-mail": () => consolePost(`/console/licences/${id}/resend-install-mail`, { request_id: "3f1c7a52-8d1e-4c1b-9a0e-2b7d9c4e5f60" }),
      "console reset-ip-changes": () => consolePost(`/console/licences/${id}/reset-ip-changes`),
      "console job retry": () => consolePost(`/console/jobs/${job.id}/retry`),
      "console job cancel": () => consolePost(`/console/jobs/${job.id}/cancel`),
      "console reconcile --fix": () => consolePost("/console/reconcile", { fix: "true" }),
      "console adoption apply": () => consolePost("/console/adoption", { services: JSON.stringify(adoption), apply: "true" }),
      "console logout": () => consolePost("/console/logout"),
    };

    const calls: Record<string, () => Promise<Answer>> = { ...Object.fromEntries(Object.entries(api).map(([route, call]) => [route, async () => read(await call())])), ...pages };
    for (const [route, call] of Object.entries(calls)) {
      const { status, text, res } = await call();
      expect(status, `${route}: ${text.slice(0, 300)}`).toBe(503);
      expect(res.headers.get("retry-after"), route).toMatch(/^\d+$/);
      expect(res.headers.get("content-type"), route).toMatch(route in pages ? /^text\/html/ : /^application\/json/);
    }
    expect(rowsChangedBy(store), "rows written into the orphaned file").toBe(changed);
    expect(sb.sandbox.ledger()).toHaveLength(charges);
  });
});
