import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { bridgeEnv, createdEvent, startTestBridge, startTestSandbox, TEST_ADMIN_TOKEN, type TestBridge, type TestSandbox } from "../helpers/bridge.js";
import { adminGet, freePort, readyz, sendTo, spawnBridge, type ChildBridge } from "../helpers/e2e-child.js";
import { orderActive, sleep, untilIdle } from "../helpers/e2e-harness.js";
import { ConsoleClient, OPERATOR_TOKEN, testOperators } from "../console/client.js";
import { holdWriteLock, type WriteLock } from "../helpers/sqlite.js";
import { waitFor } from "../helpers/wait.js";

/** Runs `fn` and returns its result with how long it took. */
async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = Date.now();
  const value = await fn();
  return { ms: Date.now() - started, value };
}

describe("another process holding SQLite's write lock", () => {
  let sb: TestSandbox | undefined;
  let dir: string | undefined;
  let child: ChildBridge | undefined;
  let other: WriteLock | undefined;
  afterEach(async () => {
    other?.release();
    await child?.kill();
    await sb?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    sb = child = dir = other = undefined;
  });

  it("leaves /healthz instant, makes /readyz and webhooks answer 503 within seconds, and accepts again once released", async () => {
    sb = await startTestSandbox();
    dir = mkdtempSync(join(tmpdir(), "lb-lock-"));
    const env = bridgeEnv(sb.running, dir, { PORT: String(await freePort()) });
    child = await spawnBridge(env);
    const url = child.url;

    // A backup or an operator's sqlite3 shell, in another process than the service.
    other = holdWriteLock(env.DATABASE_PATH!);

    // Over a few of the runner's polls, each of which tries to claim jobs.
    for (let i = 0; i < 4; i++) {
      const health = await timed(() => fetch(`${url}/healthz`));
      expect(health.value.status).toBe(200);
      expect(health.ms, "/healthz must not wait for the database").toBeLessThan(1_000);
      await sleep(300);
    }

    const ready = await timed(() => readyz(url));
    expect(ready.ms).toBeLessThan(5_000);
    expect(ready.value.status).toBe(503);
    expect(ready.value.body.reasons).toEqual([expect.stringMatching(/^database: /)]);
    expect(JSON.stringify(ready.value.body.reasons)).not.toMatch(/upstream/);

    const refused = await timed(() => sendTo(url, createdEvent({ id: "during-lock" })));
    expect(refused.ms).toBeLessThan(5_000);
    expect(refused.value.status).toBe(503);
    expect(refused.value.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(refused.value.body).toEqual({ error: expect.stringMatching(/database/), code: "unavailable" });

    other.release();
    const accepted = await sendTo(url, createdEvent({ id: "after-lock", ip: "203.0.113.44" }));
    expect(accepted.status).toBe(202);
    await waitFor(async () => (await adminGet(url, "/admin/services/after-lock")).body.status === "active", 10_000, "the licence to be active");
    expect((await adminGet(url, "/admin/services/during-lock")).status, "the refused event left nothing behind").toBe(404);
    expect((await readyz(url)).status).toBe(200);
  });

  it("a job whose outcome meets the lock records it once the lock is gone, and buys once", async () => {
    sb = await startTestSandbox({ faults: { latencyMs: 1_000 } });
    dir = mkdtempSync(join(tmpdir(), "lb-lock-"));
    const env = bridgeEnv(sb.running, dir, { PORT: String(await freePort()), LOG_LEVEL: "warn" });
    child = await spawnBridge(env);
    const sandbox = sb.sandbox;

    expect((await sendTo(child.url, createdEvent({ id: "in-flight", ip: "203.0.113.45" }))).status).toBe(202);
    await waitFor(() => sandbox.requests().some((r) => r.op === "register" && r.status === 0), 10_000, "the register call in flight");
    other = holdWriteLock(env.DATABASE_PATH!);
    await waitFor(() => sandbox.ledger().length === 1, 10_000, "the register to be charged upstream");
    await waitFor(() => child!.output().includes("recording the job's outcome on the next poll"), 10_000, "the runner to meet the lock");
    other.release();

    await waitFor(async () => (await adminGet(child!.url, "/admin/services/in-flight")).body.status === "active", 15_000, "the licence to be active");
    expect(sandbox.ledger().filter((c) => c.op === "register")).toHaveLength(1);
  });
});

describe("the console while another process holds SQLite's write lock", () => {
  let sb: TestSandbox | undefined;
  let bridge: TestBridge | undefined;
  let other: WriteLock | undefined;
  afterEach(async () => {
    other?.release();
    await bridge?.close();
    await sb?.close();
    sb = bridge = other = undefined;
  });

  /** A bridge with an active licence and an operator logged in to the console, last seen two minutes ago (their next page records the visit). */
  async function loggedIn() {
    sb = await startTestSandbox();
    bridge = await startTestBridge(sb, { consoleOperators: testOperators });
    const id = await orderActive(bridge, { product_id: "13" });
    await untilIdle(bridge);
    const job = (await bridge.service.queue.list({ serviceId: id }))[0]!;
    const operator = new ConsoleClient(bridge.url);
    await operator.login(OPERATOR_TOKEN);
    await operator.get(`/console/licences/${id}`);
    const key = createHash("sha256").update(operator.cookies.get("lb_console")!).digest("hex");
    await bridge.service.store.sessions.touch(key, Date.now() - 2 * 60_000);
    return { id, job, operator };
  }

  it("shows a logged-in operator every page", async () => {
    const { id, job, operator } = await loggedIn();
    other = holdWriteLock(bridge!.config.DATABASE_PATH);
    const pages = [
      "/console",
      "/console/licences",
      `/console/licences/${id}`,
      `/console/licences/${id}/confirm/suspend`,
      "/console/jobs",
      `/console/jobs/${job.id}/confirm/retry`,
      "/console/reconcile",
      "/console/adoption",
      "/console/audit",
    ];
    for (const page of pages) {
      const r = await operator.get(page);
      expect(r.status, `${page}: ${r.text.slice(0, 300)}`).toBe(200);
      expect(r.text, page).toContain("otto (operator)");
    }
  });

  it("answers a form that would write with an HTML 503 page and Retry-After, and the same form once released does its work", async () => {
    const { id, operator } = await loggedIn();
    await bridge!.service.store.services.change({ serviceId: id, patch: { ip_changes: 2 } });
    other = holdWriteLock(bridge!.config.DATABASE_PATH);

    const refused = await operator.post(`/console/licences/${id}/reset-ip-changes`);
    expect(refused.status).toBe(503);
    expect(refused.res.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(refused.res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(refused.text).toMatch(/<h1>[^<]+<\/h1>/);
    expect(refused.text).toContain("busy");
    expect((await bridge!.service.services.get(id))?.ip_changes).toBe(2);

    other.release();
    const done = await operator.post(`/console/licences/${id}/reset-ip-changes`);
    expect(done.status).toBe(200);
    expect((await bridge!.service.services.get(id))?.ip_changes).toBe(0);
  });

  it("answers a login as an HTML 503 page with Retry-After: a session cannot be opened meanwhile", async () => {
    sb = await startTestSandbox();
    bridge = await startTestBridge(sb);
    other = holdWriteLock(bridge.config.DATABASE_PATH);
    const r = await new ConsoleClient(bridge.url).login(TEST_ADMIN_TOKEN);
    expect(r.status).toBe(503);
    expect(r.res.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(r.res.headers.get("content-type")).toMatch(/^text\/html/);
  });
});
