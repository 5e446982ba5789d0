import { describe, expect, it } from "vitest";
import { orderActive, usePairPerFile } from "../helpers/e2e-harness.js";
import { spawnCli } from "./helpers.js";

/**
 * The real bin, `node bin/license-bridge.mjs`, as `npx license-bridge` runs it: a few smoke tests
 * of the process around the CLI (its exit code, its streams, the compiled dist/). The commands
 * themselves are tested in this process (runCli); serve and sandbox, which run until a signal,
 * are spawned where they are tested (test/npm-start.test.ts, test/e2e/, operations.test.ts).
 */
describe("the license-bridge bin", () => {
  const pair = usePairPerFile();

  it("--help exits 0 and lists the commands", async () => {
    const run = await spawnCli(["--help"], {});
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/licenses[\s\S]*jobs[\s\S]*reconcile/);
  });

  it("ends with exit code 78 and the problem named when the configuration is broken", async () => {
    const run = await spawnCli(["licenses", "list"], { ...pair().bridge.env, RESELLER_PROTOCOL: "v3" });
    expect(run.code).toBe(78);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("RESELLER_PROTOCOL");
  });

  it("licenses show --json against a running bridge's database prints what GET /admin/services/:id answers", async () => {
    const { bridge } = pair();
    const id = await orderActive(bridge);
    const run = await spawnCli(["licenses", "show", id, "--json"], bridge.env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toEqual((await bridge.admin(`/admin/services/${id}`)).body);
  });
});
