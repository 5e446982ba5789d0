import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { CORE_FILES, copies, GENERATED, messagesSource, SHARED_DIR } from "../../integrations/sync.js";
import { ERROR_HINTS } from "../../src/vocabulary/error-codes.js";
import { MIN_MODULE_VERSION, MODULE_VERSION } from "../../src/provisioning/module-clients.js";
import { createdEvent, TEST_PROVISIONING_TOKEN, uniqueIp } from "../helpers/bridge.js";
import { usePair, waitStatus } from "../helpers/e2e-harness.js";
import { INTEGRATIONS, phpUnavailable, runPhp } from "../helpers/php.js";

/**
 * The one PHP client of the provisioning API that every panel module carries a copy of
 * (integrations/shared/LicenseBridgeClient.php), run for real by php-cli against a bridge.
 */

describe("the modules' PHP core and its copies", () => {
  it("LicenseBridgeMessages.php is what the bridge's error codes and module version generate", () => {
    expect(readFileSync(GENERATED, "utf8")).toBe(messagesSource());
  });

  it("every module carries a byte-identical copy of each file of integrations/shared/ (npm run integrations:sync)", () => {
    for (const [source, copy] of copies()) {
      expect(existsSync(copy), copy).toBe(true);
      expect(readFileSync(copy).equals(readFileSync(source)), `${copy} differs from the source: run npm run integrations:sync`).toBe(true);
    }
  });

  it("no copy of a core file stands anywhere else under integrations/ (it would drift unchecked)", () => {
    const all = readdirSync(INTEGRATIONS, { recursive: true }) as string[];
    for (const file of CORE_FILES) {
      const found = all.filter((f) => basename(f) === file).map((f) => resolve(INTEGRATIONS, f));
      const expected = [join(SHARED_DIR, file), ...copies().filter(([s]) => basename(s) === file).map(([, c]) => c)];
      expect(found.sort()).toEqual(expected.map((f) => resolve(f)).sort());
    }
  });

  it("the sync check fails, naming the file, when a module's copy differs, and passes once synced", async () => {
    const [, copy] = copies()[0]!;
    const original = readFileSync(copy);
    const check = () => spawnSync(process.execPath, ["--import", "tsx", "integrations/sync.ts", "--check"], { cwd: resolve(INTEGRATIONS, ".."), encoding: "utf8" });
    try {
      writeFileSync(copy, Buffer.concat([original, Buffer.from("\n// edited by hand\n")]));
      const stale = check();
      expect(stale.status).toBe(1);
      expect(stale.stderr).toContain(`stale: ${relative(INTEGRATIONS, copy)}`);
    } finally {
      writeFileSync(copy, original);
    }
    expect(check().status).toBe(0);
  });
});

const skip = phpUnavailable();
const DRIVER = join(INTEGRATIONS, "shared/tests/client-call.php");

interface Call {
  result: { ok: boolean; pending: boolean; status: number; data: Record<string, unknown>; code: string | null; error: string | null; hint: string };
  logged: { action: string; request: Record<string, unknown>; response: { status: number; body: string } }[];
  user_agent: string;
}

describe.skipIf(skip !== null)(`the shared PHP client against a running bridge${skip ? ` [skipped: ${skip}]` : ""}`, () => {
  const pair = usePair();
  const call = async (name: string, params: Record<string, unknown>, env: Record<string, string> = {}, method = "POST") => {
    const run = await runPhp(DRIVER, [name, method], {
      LB_URL: pair().bridge.url,
      LB_TOKEN: TEST_PROVISIONING_TOKEN,
      LB_PARAMS: JSON.stringify(params),
      ...env,
    });
    expect(run.code, run.stderr).toBe(0);
    return run.json<Call>();
  };

  it("creates a licence with a form POST and reads it back with a GET; the token reaches no log", async () => {
    const created = await call("create", { service_identifier: "php-1", package_identifier: "12", ip: "203.0.113.61", customer_email: "ann@example.com" });
    expect(created.result).toMatchObject({ ok: true, pending: false, status: 200, code: null, error: null });
    expect(created.result.data).toMatchObject({ status: "active", ip: "203.0.113.61", install_command: expect.stringContaining("203.0.113.61") });
    const info = await call("info", { license_key: created.result.data.license_key }, {}, "GET");
    expect(info.result.data.service_identifier).toBe("php-1");
    for (const c of [created, info]) {
      expect(c.logged).toHaveLength(1);
      expect(JSON.stringify(c.logged)).not.toContain(TEST_PROVISIONING_TOKEN);
    }
  });

  it("returns the bridge's code and a readable error for a refusal, and `pending` for a 202", async () => {
    const refused = await call("create", { service_identifier: "php-2", package_identifier: "12", ip: "127.0.0.1" });
    expect(refused.result).toMatchObject({ ok: false, status: 422, code: "ip_unusable", error: expect.stringMatching(/^Validation error: ip /) });

    pair().sb.sandbox.setFaults({ latencyMs: 1_500 });
    const slow = await call("create", { service_identifier: "php-3", package_identifier: "12", ip: "203.0.113.63" }, {}, "POST");
    // PROVISION_WAIT_SECONDS is 20 here: a slow reseller is still faster, so this one completes.
    expect(slow.result.ok).toBe(true);
  });

  it("reports an unreachable bridge without throwing, and never shows the token", async () => {
    const run = await call("info", { service_identifier: "x" }, { LB_URL: "http://127.0.0.1:9", LB_TOKEN: "secret-token-that-must-not-leak", LB_TIMEOUT: "2" }, "GET");
    expect(run.result).toMatchObject({ ok: false, status: 0, code: "unreachable", error: expect.stringContaining("could not be reached") });
    expect(JSON.stringify(run)).not.toContain("secret-token-that-must-not-leak");
  });

  it("a wrong token is a 401 with code unauthorized, and the hint says where the token goes", async () => {
    const run = await call("info", { service_identifier: "x" }, { LB_TOKEN: "not-the-token-0123456789" }, "GET");
    expect(run.result).toMatchObject({ ok: false, status: 401, code: "unauthorized", hint: ERROR_HINTS.unauthorized });
  });

  it("sends User-Agent license-bridge-<panel>/<version>: the bridge records the module on the service, lists it and counts it", async () => {
    const { bridge } = pair();
    const created = await call("create", { service_identifier: "ua-1", package_identifier: "12", ip: uniqueIp() }, { LB_PANEL: "whmcs" });
    expect(created.user_agent).toBe(`license-bridge-whmcs/${MODULE_VERSION}`);
    expect(created.result.ok).toBe(true);
    expect((await bridge.admin("/admin/services/ua-1")).body.module).toBe(`whmcs/${MODULE_VERSION}`);
    expect((await bridge.admin("/admin/modules")).body).toEqual({
      current_version: MODULE_VERSION,
      min_version: MIN_MODULE_VERSION,
      modules: [{ module: `whmcs/${MODULE_VERSION}`, panel: "whmcs", version: MODULE_VERSION, services: 1, outdated: false }],
    });
    const metrics = await (await fetch(`${bridge.url}/metrics`)).text();
    expect(metrics).toContain(`license_bridge_provisioning_calls_total{call="create",module="whmcs/${MODULE_VERSION}",status="200"} 1`);
  });

  it("waits for an order made over a webhook as for its own", async () => {
    const order = createdEvent();
    await pair().bridge.send(order);
    await waitStatus(pair().bridge, order.service.id, "active");
    const info = await call("info", { service_identifier: order.service.id }, {}, "GET");
    expect(info.result.data.status).toBe("active");
  });
});

describe.skipIf(skip !== null)(`the shared PHP client's text rules on a PHP without mbstring${skip ? ` [skipped: ${skip}]` : ""}`, () => {
  const TEXT_DRIVER = join(INTEGRATIONS, "shared/tests/client-text.php");
  const run = async (texts: Buffer[]) => {
    const r = await runPhp(TEXT_DRIVER, [], { LB_TEXTS: JSON.stringify(texts.map((t) => t.toString("base64"))) });
    expect(r.code, r.stderr).toBe(0);
    const out = r.json<{ mbstring: boolean; names: (string | null)[]; clipped: string[] }>();
    const text = (b: string | null) => (b === null ? null : Buffer.from(b, "base64").toString("utf8"));
    return { mbstring: out.mbstring, names: out.names.map(text), clipped: out.clipped.map(text) };
  };

  it("runs on the bare PHP the modules are tested on: mbstring is not loaded", async () => {
    expect((await run([])).mbstring).toBe(false);
  });

  it("a customer's name: control characters and line separators become one space, at most 200 UTF-16 units, blank is none", async () => {
    const astral = "😀".repeat(150); // 300 UTF-16 units, 600 bytes
    const out = await run([
      Buffer.from("Ann\u0000\u001fExample\u2028Ltd"),
      Buffer.from("é".repeat(250)),
      Buffer.from(astral),
      Buffer.from(" \t\n "),
      Buffer.from([0x41, 0x6e, 0x6e, 0xff, 0xfe, 0x42]), // not UTF-8
    ]);
    expect(out.names[0]).toBe("Ann Example Ltd");
    expect(out.names[1]).toBe("é".repeat(200));
    expect(out.names[2]).toBe("😀".repeat(100));
    expect(out.names[2]!.length).toBe(200); // what the bridge's schema counts
    expect(out.names[3]).toBeNull();
    expect(out.names[4]).toBe("Ann B");
  });

  it("clip never cuts a character in half", async () => {
    const out = await run([Buffer.from("abcdé"), Buffer.from("abcd😀"), Buffer.from("ab€€€€")]);
    expect(out.clipped).toEqual(["abcdé", "abcd", "ab€€€"]);
  });
});
