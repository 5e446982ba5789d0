import { mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bridgeEnv, createdEvent, startTestSandbox, type TestSandbox } from "../helpers/bridge.js";
import { freePort, readyz, sendTo, spawnBridge, type ChildBridge } from "../helpers/e2e-child.js";
import { systemClock } from "../../src/clock.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import { waitFor } from "../helpers/wait.js";

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
