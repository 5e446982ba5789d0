import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bridgeEnv, startTestSandbox, type TestSandbox } from "../helpers/bridge.js";
import { freePort, runBridgeToExit } from "../helpers/e2e-child.js";
import { tempDirs } from "../helpers/temp-dirs.js";

/** stderr as lines, without empty ones. */
const lines = (text: string) => text.split("\n").filter((l) => l.trim() !== "");

describe("a start-up that cannot listen", () => {
  let sb: TestSandbox | undefined;
  let blocker: Server | undefined;
  const dirs = tempDirs("lb-startup-");
  const tempDir = () => dirs.make();
  afterEach(async () => {
    await sb?.close();
    await new Promise<void>((r) => (blocker ? blocker.close(() => r()) : r()));
    sb = blocker = undefined;
    dirs.removeAll();
  });

  it("on a port in use exits non-zero with one line naming host:port, and never says it is listening", async () => {
    const port = await freePort();
    blocker = createServer();
    await new Promise<void>((ok) => blocker!.listen(port, "127.0.0.1", ok));
    sb = await startTestSandbox();

    const run = await runBridgeToExit(bridgeEnv(sb.running, tempDir(), { PORT: String(port), LOG_LEVEL: "info" }));

    expect(run.code, "the service must exit by itself").not.toBeNull();
    expect(run.code).not.toBe(0);
    const naming = lines(run.stderr).filter((l) => l.includes(`127.0.0.1:${port}`));
    expect(naming).toEqual([`license-bridge: cannot listen on 127.0.0.1:${port}: the address is in use (set PORT, or stop what holds it)`]);
    expect(run.stderr + run.stdout).not.toMatch(/listening/i);
    expect(sb.sandbox.requests(), "nothing was sent upstream").toEqual([]);
  });

  it("on a HOST that is not an address of this machine exits non-zero, naming it, and leaves no sandbox running", async () => {
    const dir = tempDir();
    const port = await freePort();
    // Sandbox mode: the embedded reseller sandbox starts before the listener, so it must be stopped too.
    const run = await runBridgeToExit({ HOST: "192.0.2.1", PORT: String(port), DATABASE_PATH: join(dir, "bridge.db"), LOG_LEVEL: "info" });

    expect(run.code, "the service must exit by itself").not.toBeNull();
    expect(run.code).not.toBe(0);
    const naming = lines(run.stderr).filter((l) => l.includes(`192.0.2.1:${port}`));
    expect(naming).toEqual([`license-bridge: cannot listen on 192.0.2.1:${port}: not an address of this machine (set HOST)`]);
    expect(run.stderr + run.stdout).not.toMatch(/listening/i);
    expect(existsSync(join(dir, "sandbox-upstream.json")), "the embedded sandbox left its address behind").toBe(false);
  });
});

describe("a start-up that cannot reach its PostgreSQL database", () => {
  it("exits non-zero with one line naming DATABASE_URL and the server, never the password, and never listens", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lb-startup-"));
    try {
      const dbPort = await freePort();
      const sb = await startTestSandbox();
      try {
        const run = await runBridgeToExit(bridgeEnv(sb.running, dir, { PORT: String(await freePort()), DATABASE_URL: `postgres://bridge:pgS3cretpw@127.0.0.1:${dbPort}/licences`, LOG_LEVEL: "info" }));
        expect(run.code, "the service must exit by itself").not.toBeNull();
        expect(run.code).not.toBe(0);
        const naming = lines(run.stderr).filter((l) => l.startsWith("license-bridge: DATABASE_URL:"));
        expect(naming).toEqual([`license-bridge: DATABASE_URL: cannot use PostgreSQL at 127.0.0.1:${dbPort}/licences: connect ECONNREFUSED 127.0.0.1:${dbPort}`]);
        expect(run.stderr + run.stdout).not.toContain("pgS3cretpw");
        expect(run.stderr + run.stdout).not.toMatch(/listening/i);
      } finally {
        await sb.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
