import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/load.js";
import { silentLogger } from "../src/log/logger.js";
import { startService, type RunningService } from "../src/compose/service.js";
import { runCli } from "./cli/helpers.js";
import { MAIN_RESELLER_ID } from "../src/vocabulary/sandbox-identity.js";

/**
 * The reseller balance in sandbox mode, which needs no setting. Sandbox mode takes no
 * DATABASE_URL (a live setting), so this file is not among the suites run again on PostgreSQL
 * (vitest.config.ts BOTH_STORES): one store, nothing skipped.
 */

const scrape = async (url: string) => {
  const text = await (await fetch(`${url}/metrics`)).text();
  return { balance: [...text.matchAll(/^license_bridge_reseller_balance (\S+)$/gm)].map((m) => Number(m[1])) };
};

describe("the reseller balance in sandbox mode", () => {
  let service: RunningService | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await service?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    service = dir = undefined;
  });

  it("needs no setting: the embedded sandbox's own reseller, read with its admin token", async () => {
    dir = mkdtempSync(join(tmpdir(), "lb-balance-sandbox-"));
    const config = loadConfig({ env: { HOST: "127.0.0.1", PORT: "0", DATABASE_PATH: join(dir, "bridge.db"), LOG_LEVEL: "silent" }, cwd: process.cwd() });
    expect(config.upstream.mode).toBe("sandbox");
    service = await startService({ config, logger: silentLogger(), renewalSchedule: false });

    const res = await fetch(`${service.url}/admin/balance`, { headers: { authorization: `Bearer ${config.ADMIN_TOKEN[0]}` } });
    expect(await res.json()).toEqual({ balance: 1000, checked_at: expect.any(String), reason: null });
    expect((await scrape(service.url)).balance).toEqual([1000]);
  });
});

describe("reseller balance in sandbox mode", () => {
  let dir: string;
  let service: RunningService | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "lb-cli-sandbox-balance-"));
    const config = loadConfig({ env: { HOST: "127.0.0.1", PORT: "0", DATABASE_PATH: join(dir, "bridge.db"), LOG_LEVEL: "silent" }, cwd: process.cwd() });
    service = await startService({ config, logger: silentLogger(), renewalSchedule: false });
  });

  afterAll(async () => {
    await service?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("without an id reads the running service's sandbox's own reseller, with no setting", async () => {
    const run = await runCli(["reseller", "balance", "--json"], { DATABASE_PATH: join(dir, "bridge.db") });
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toEqual({ id: String(MAIN_RESELLER_ID), balance: 1000 });
  });
});
