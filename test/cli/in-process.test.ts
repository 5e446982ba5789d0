import { cpSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { readMigrations } from "../../src/store/sqlite/migrations.js";
import { startTestSandbox, testBridgeEnv, type TestSandbox } from "../helpers/bridge.js";
import { tempDirs } from "../helpers/temp-dirs.js";
import { databaseLabel } from "../helpers/test-store.js";
import { runCli } from "./helpers.js";

/**
 * The CLI run inside a test's process (runCli with its own io): a run reads the environment and
 * directory it is given and writes to its own streams, so runs side by side do not see each
 * other, and the process is left as it was found.
 */
describe("the CLI run in this process", () => {
  let sb: TestSandbox;
  const dirs = tempDirs("lb-cli-in-process-");
  const applied = readMigrations().map((m) => ({ id: m.id, name: m.name }));
  const signalListeners = () => Object.fromEntries(["SIGINT", "SIGTERM", "SIGHUP"].map((s) => [s, process.listenerCount(s)]));

  beforeAll(async () => {
    sb = await startTestSandbox();
  });
  afterAll(async () => {
    await sb?.close();
  });
  afterEach(() => dirs.removeAll());

  it("reads its settings from the environment and directory it is given, and leaves this process's own as they were", async () => {
    const dir = dirs.make();
    // The catalogue and the database are found relative to the run's directory, not this process's.
    cpSync(resolve(import.meta.dirname, "../../config/products.json"), join(dir, "config/products.json"));
    const env = await testBridgeEnv(sb.running, dir, { DATABASE_PATH: "data/bridge.db" });
    const before = { env: { ...process.env }, cwd: process.cwd(), exitCode: process.exitCode, signals: signalListeners() };

    const run = await runCli(["migrate", "--json"], env, { cwd: dir });

    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toEqual({ database: databaseLabel({ ...env, DATABASE_PATH: join(dir, "data/bridge.db") }), applied });
    expect({ env: process.env, cwd: process.cwd(), exitCode: process.exitCode, signals: signalListeners() }).toEqual(before);
  });

  it("two runs at once, each with its own database, answer each for its own, on its own streams", async () => {
    const [envA, envB] = await Promise.all([testBridgeEnv(sb.running, dirs.make()), testBridgeEnv(sb.running, dirs.make())]);

    const [a, b] = await Promise.all([runCli(["migrate", "--json"], envA), runCli(["migrate", "--json"], envB)]);
    expect([a.code, b.code], a.stderr + b.stderr).toEqual([0, 0]);
    expect(a.json()).toEqual({ database: databaseLabel(envA), applied });
    expect(b.json()).toEqual({ database: databaseLabel(envB), applied });

    // One run's configuration error is its own: the other lists its jobs, and says nothing of it.
    const [listed, broken] = await Promise.all([runCli(["jobs", "list", "--json"], envA), runCli(["jobs", "list", "--json"], { ...envB, RESELLER_PROTOCOL: "v3" })]);
    expect(listed).toMatchObject({ code: 0, stderr: "" });
    expect(listed.json()).toEqual({ jobs: [], next_cursor: null, total: 0 });
    expect(broken).toMatchObject({ code: 78, stdout: "" });
    expect(broken.stderr).toContain("RESELLER_PROTOCOL");
  });
});
