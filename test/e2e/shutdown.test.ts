import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/database.js";
import { bridgeEnv, createdEvent, startTestSandbox, type TestSandbox } from "../helpers/bridge.js";
import { freePort, sendTo, spawnBridge, type ChildBridge } from "../helpers/e2e-child.js";
import { waitFor } from "../helpers/wait.js";

describe("SIGTERM", () => {
  let sb: TestSandbox | undefined;
  let dir: string | undefined;
  let child: ChildBridge | undefined;
  afterEach(async () => {
    await child?.kill();
    await sb?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    sb = child = dir = undefined;
  });

  it("stops claiming, lets the running job finish, then exits 0", async () => {
    sb = await startTestSandbox({ faults: { latencyMs: 1_000 } });
    dir = mkdtempSync(join(tmpdir(), "lb-term-"));
    child = await spawnBridge(bridgeEnv(sb.running, dir, { PORT: String(await freePort()), WORKER_CONCURRENCY: "1", LOG_LEVEL: "silent" }));
    expect((await sendTo(child.url, createdEvent({ id: "first", ip: "192.0.2.1" }))).status).toBe(202);
    expect((await sendTo(child.url, createdEvent({ id: "second", ip: "192.0.2.2" }))).status).toBe(202);
    const sandbox = sb.sandbox;
    await waitFor(() => sandbox.requests().some((r) => r.op === "register" && r.status === 0), 10_000, "the first register in flight");

    const exited = new Promise<number | null>((r) => child!.proc.once("exit", (code) => r(code)));
    child.proc.kill("SIGTERM");
    expect(await exited).toBe(0);

    const db = openDatabase(join(dir, "bridge.db"), { readonly: true });
    const status = (id: string) => (db.prepare("SELECT status FROM services WHERE service_id = ?").get(id) as { status: string }).status;
    const jobs = db.prepare("SELECT service_id, kind, state, attempts FROM jobs WHERE kind = 'register' ORDER BY id").all();
    const statuses = [status("first"), status("second")];
    db.close();
    expect(statuses).toEqual(["active", "pending"]);
    expect(jobs).toEqual([
      { service_id: "first", kind: "register", state: "succeeded", attempts: 1 },
      { service_id: "second", kind: "register", state: "queued", attempts: 0 },
    ]);
    expect(sandbox.ledger()).toHaveLength(1);
  });
});
