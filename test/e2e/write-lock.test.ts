import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bridgeEnv, createdEvent, startTestSandbox, type TestSandbox } from "../helpers/bridge.js";
import { adminGet, freePort, readyz, sendTo, spawnBridge, type ChildBridge } from "../helpers/e2e-child.js";
import { sleep } from "../helpers/e2e-harness.js";
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
