import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/logger.js";
import { isOutdated, MIN_MODULE_VERSION, moduleClientOf } from "../../src/provisioning/module-clients.js";
import { uniqueIp } from "../helpers/bridge.js";
import { usePairInTest } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";

/** Which panel module calls the provisioning API: read from its User-Agent, recorded, and checked against the versions the bridge supports. */

describe("a module's User-Agent", () => {
  it.each([
    ["license-bridge-whmcs/0.2.0", { panel: "whmcs", version: "0.2.0" }],
    ["license-bridge-FOSSBilling/1.10.3 (php 8.2)", { panel: "fossbilling", version: "1.10.3" }],
    ["license-bridge-blesta/0.2", undefined],
    ["curl/8.5.0", undefined],
    ["", undefined],
    [undefined, undefined],
  ])("%s names %o", (agent, client) => {
    expect(moduleClientOf(agent)).toEqual(client);
  });

  it("a version is outdated when it is older than the minimum, part by part", () => {
    expect(isOutdated("0.1.9", "0.2.0")).toBe(true);
    expect(isOutdated("0.10.0", "0.2.0")).toBe(false);
    expect(isOutdated("0.2.0", "0.2.0")).toBe(false);
    expect(isOutdated("1.0.0", "0.2.0")).toBe(false);
  });
});

describe("an outdated module calling the bridge", () => {
  // A bridge per test, not per file: both read the whole of /admin/modules (one module, or none),
  // and the first reads the warnings of a logger it gives its bridge.
  const startPair = usePairInTest();

  it("is served, named once in a warning line, and shown outdated in /admin/modules", async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: "info", destination: new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }) });
    const { bridge } = await startPair({ logger });
    const old = { headers: { "user-agent": "license-bridge-blesta/0.0.9" } };
    for (const id of ["old-1", "old-2"]) {
      const r = await bridge.provision("create", { service_identifier: id, package_identifier: "12", ip: uniqueIp() }, old);
      expect(r.status).toBe(200);
    }
    const warnings = lines.map((l) => JSON.parse(l) as { level: number; msg: string; module?: string }).filter((l) => l.module === "blesta/0.0.9");
    expect(warnings).toEqual([expect.objectContaining({ level: 40, msg: expect.stringContaining(`older than this bridge supports (${MIN_MODULE_VERSION})`) })]);
    // The calling module is noted after the answer is sent: the second call's note may land just after it.
    await waitFor(async () => (await bridge.service.services.get("old-2"))?.module === "blesta/0.0.9", 5_000, "the second call's module to be noted");
    const modules = (await bridge.admin("/admin/modules")).body.modules;
    expect(modules).toEqual([{ module: "blesta/0.0.9", panel: "blesta", version: "0.0.9", services: 2, outdated: true }]);
  });

  it("a caller that is not one of our modules (curl, Upmind's own provider) is served and records nothing", async () => {
    const { bridge } = await startPair();
    const r = await bridge.provision("create", { service_identifier: "plain-1", package_identifier: "12", ip: uniqueIp() }, { headers: { "user-agent": "curl/8.5.0" } });
    expect(r.status).toBe(200);
    expect((await bridge.admin("/admin/services/plain-1")).body.module).toBeNull();
    expect((await bridge.admin("/admin/modules")).body.modules).toEqual([]);
  });
});
