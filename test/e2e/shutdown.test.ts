import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { Writable } from "node:stream";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { createLogger } from "../../src/log/logger.js";
import { startService } from "../../src/compose/service.js";
import { testBridgeEnv, createdEvent, startTestSandbox, type TestSandbox } from "../helpers/bridge.js";
import { adminGet, explained, freePort, sendTo, spawnBridge, type ChildBridge } from "../helpers/e2e-child.js";
import { readStoreOf } from "../helpers/test-store.js";
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

  it("sent while the service starts: it starts, then stops as on any SIGTERM (exit 0), never killed outright", async () => {
    sb = await startTestSandbox();
    dir = mkdtempSync(join(tmpdir(), "lb-term-"));
    const env = await testBridgeEnv(sb.running, dir, { PORT: String(await freePort()), LOG_LEVEL: "info" });
    const proc = spawn(process.execPath, [resolve(import.meta.dirname, "../../bin/license-bridge.mjs"), "serve"], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => proc.once("exit", (code, signal) => r({ code, signal })));
    // The "configuration" line comes before the database is opened and the port bound.
    await new Promise<void>((ready) => {
      const read = (d: Buffer) => {
        out += d.toString();
        if (out.includes('"msg":"configuration"')) ready();
      };
      proc.stdout!.on("data", read);
      proc.stderr!.on("data", read);
    });
    proc.kill("SIGTERM");
    expect(await exited, out).toEqual({ code: 0, signal: null });
    expect(out).toMatch(/"msg":"stopped"/);
  });

  it("stops claiming, lets the running job finish, then exits 0", async () => {
    sb = await startTestSandbox({ faults: { latencyMs: 1_000 } });
    dir = mkdtempSync(join(tmpdir(), "lb-term-"));
    const env = await testBridgeEnv(sb.running, dir, { PORT: String(await freePort()), WORKER_CONCURRENCY: "1", LOG_LEVEL: "silent" });
    child = await spawnBridge(env);
    expect((await sendTo(child.url, createdEvent({ id: "first", ip: "192.0.2.1" }))).status).toBe(202);
    expect((await sendTo(child.url, createdEvent({ id: "second", ip: "192.0.2.2" }))).status).toBe(202);
    const sandbox = sb.sandbox;
    await waitFor(() => sandbox.requests().some((r) => r.op === "register" && r.status === 0), 10_000, "the first register in flight");

    const exited = new Promise<number | null>((r) => child!.proc.once("exit", (code) => r(code)));
    child.proc.kill("SIGTERM");
    expect(await exited).toBe(0);

    const { statuses, jobs } = await readStoreOf(env, async (store) => ({
      statuses: [(await store.services.get("first"))?.status, (await store.services.get("second"))?.status],
      // Newest first: oldest first, as they were queued.
      jobs: (await store.jobs.list({ kind: "register" })).reverse().map((j) => ({ service_id: j.serviceId, kind: j.kind, state: j.state, attempts: j.attempts })),
    }));
    expect(statuses).toEqual(["active", "pending"]);
    expect(jobs).toEqual([
      { service_id: "first", kind: "register", state: "succeeded", attempts: 1 },
      { service_id: "second", kind: "register", state: "queued", attempts: 0 },
    ]);
    expect(sandbox.ledger()).toHaveLength(1);
  });

  it("leaves a job still running after the grace to its lease: exit 0, no write to the closed database, resumed after a restart", async () => {
    sb = await startTestSandbox({ faults: { latencyMs: 2_000 } });
    dir = mkdtempSync(join(tmpdir(), "lb-term-"));
    const env = await testBridgeEnv(sb.running, dir, { PORT: String(await freePort()), SHUTDOWN_GRACE_MS: "200", RESELLER_TIMEOUT_MS: "10000", LOG_LEVEL: "info" });
    child = await spawnBridge(env);
    expect((await sendTo(child.url, createdEvent({ id: "late", ip: "192.0.2.3" }))).status).toBe(202);
    const sandbox = sb.sandbox;
    const first = child;
    const seen = () => ({ "bridge output": first.output(), "sandbox requests": sandbox.requests(), "sandbox ledger": sandbox.ledger() });
    await explained(waitFor(() => sandbox.requests().some((r) => r.op === "register" && r.status === 0), 10_000, "the register in flight"), seen);

    const exited = new Promise<number | null>((r) => child!.proc.once("exit", (code) => r(code)));
    child.proc.kill("SIGTERM");
    expect(await exited, child.output()).toBe(0);
    expect(child.output()).not.toMatch(/database connection is not open/);
    expect(child.output()).toMatch(/jobs still running at shutdown/);

    const jobs = await readStoreOf(env, (store) => store.jobs.list({ kind: "register", serviceId: "late" }));
    expect(jobs.map((j) => ({ state: j.state, attempts: j.attempts }))).toEqual([{ state: "running", attempts: 1 }]);

    // The held call commits upstream meanwhile; the restarted bridge finds it there and buys nothing more.
    sandbox.setFaults({ latencyMs: 0 });
    await explained(waitFor(() => sandbox.ledger().length === 1, 10_000, "the held register to be charged"), seen);
    child = await spawnBridge(env);
    await waitFor(async () => (await adminGet(child!.url, "/admin/services/late")).body.status === "active", 15_000, "the licence to be active after the restart");
    expect(sandbox.ledger().filter((c) => c.op === "register")).toHaveLength(1);
  });

  it("in-process: a job that ends after the grace writes nothing to the closed database and throws nowhere", async () => {
    sb = await startTestSandbox({ faults: { latencyMs: 800 } });
    dir = mkdtempSync(join(tmpdir(), "lb-term-"));
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const env = await testBridgeEnv(sb.running, dir, { RESELLER_TIMEOUT_MS: "5000" });
    const config = loadConfig({ env, cwd: process.cwd() });
    const service = await startService({ config, logger: createLogger({ level: "info", destination, pretty: false }), pollMs: 50, shutdownGraceMs: 100 });
    expect((await sendTo(service.url, createdEvent({ id: "late-in-process", ip: "192.0.2.4" }))).status).toBe(202);
    const sandbox = sb.sandbox;
    await waitFor(() => sandbox.requests().some((r) => r.op === "register" && r.status === 0), 10_000, "the register in flight");

    expect(await service.close()).toEqual({ unfinished: 1 });
    await waitFor(() => lines.some((l) => l.includes("job attempt ended after shutdown")), 10_000, "the late job to end");

    const log = lines.join("");
    expect(log).not.toMatch(/database connection is not open|could not record/);
    const jobs = await readStoreOf(env, (store) => store.jobs.list({ serviceId: "late-in-process" }));
    expect(jobs.map((j) => ({ state: j.state, attempts: j.attempts }))).toEqual([{ state: "running", attempts: 1 }]);
  });
});
