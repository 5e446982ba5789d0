import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createdEvent, provisionAt, startTestSandbox, TEST_ADMIN_TOKEN, testBridgeEnv, type TestSandbox } from "../helpers/bridge.js";
import { explained, freePort, sendTo, spawnBridge, type ChildBridge } from "../helpers/e2e-child.js";
import { waitFor } from "../helpers/wait.js";

/**
 * The service's signals as a supervisor sends them (systemd, Docker, a balancer's drain): SIGTERM
 * drains before it stops, SIGHUP re-reads the configuration without a restart.
 */

const lines = (child: ChildBridge) =>
  child
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as { level: number; msg: string; [k: string]: unknown });

const adminStatus = async (url: string, token: string) => (await fetch(`${url}/admin/licenses`, { headers: { authorization: `Bearer ${token}` } })).status;

describe("SIGTERM drains", () => {
  let sb: TestSandbox | undefined;
  let dir: string | undefined;
  let child: ChildBridge | undefined;
  afterEach(async () => {
    await child?.kill();
    await sb?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    sb = child = dir = undefined;
  });

  it("/readyz says 503 draining at once, a provisioning call waiting for its work is answered 202 pending, and nothing is logged at error level", async () => {
    sb = await startTestSandbox();
    dir = mkdtempSync(join(tmpdir(), "lb-drain-"));
    const env = await testBridgeEnv(sb.running, dir, { PORT: String(await freePort()), LOG_LEVEL: "info", PROVISION_WAIT_SECONDS: "60", SHUTDOWN_GRACE_MS: "10000", RESELLER_TIMEOUT_MS: "10000" });
    child = await spawnBridge(env);
    const bridge = child;
    const sandbox = sb.sandbox;
    expect((await fetch(`${bridge.url}/readyz`)).status).toBe(200);
    sandbox.setFaults({ latencyMs: 3_000 });

    // A create waits for its purchase, which the slow reseller is still carrying out.
    const waiting = provisionAt(bridge.url, "create", { service_identifier: "drain-1", package_identifier: "12", ip: "192.0.2.61" });
    await explained(
      waitFor(() => sandbox.requests().some((r) => r.op === "register"), 10_000, "the register in flight"),
      () => ({ bridge: bridge.output() }),
    );
    const exited = new Promise<number | null>((r) => bridge.proc.once("exit", (code) => r(code)));
    bridge.proc.kill("SIGTERM");

    // Draining, not yet stopped (the running register has the grace to finish): /readyz says so
    // as soon as the signal is handled, long before the exit.
    let readiness: unknown;
    await explained(
      waitFor(
        async () => {
          // (Before the signal is handled it says "not ready" already: the slow reseller fails its upstream check.)
          const r = await fetch(`${bridge.url}/readyz`);
          readiness = await r.json();
          return r.status === 503 && (readiness as { status?: string }).status === "draining";
        },
        5_000,
        "/readyz to answer 503",
      ),
      () => ({ bridge: bridge.output(), sandbox: sandbox.requests() }),
    );
    expect(readiness).toMatchObject({ status: "draining" });
    expect(bridge.proc.exitCode, bridge.output()).toBeNull();
    const refused = await sendTo(bridge.url, createdEvent({ id: "late-order", ip: "192.0.2.62" }));
    expect(refused.status, bridge.output()).toBe(503);
    const answered = await waiting;
    expect(answered, bridge.output()).toMatchObject({ status: 202, body: { success: false, status: "pending" } });

    expect(await exited, bridge.output()).toBe(0);
    expect(lines(bridge).filter((l) => l.level >= 50), bridge.output()).toEqual([]);
    expect(sandbox.ledger(), JSON.stringify({ requests: sandbox.requests(), out: bridge.output() })).toHaveLength(1);
  });
});

describe("SIGHUP reloads", () => {
  let sb: TestSandbox | undefined;
  let dir: string | undefined;
  let child: ChildBridge | undefined;
  afterEach(async () => {
    await child?.kill();
    await sb?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    sb = child = dir = undefined;
  });

  const NEW_TOKEN = "rotated-admin-token-0123456789";

  it("rotates the admin token from ENV_FILE (old and new, then only the new), takes a new catalogue, and keeps running on a broken configuration", async () => {
    sb = await startTestSandbox();
    dir = mkdtempSync(join(tmpdir(), "lb-hup-"));
    const envFile = join(dir, "env");
    const catalogue = join(dir, "products.json");
    const writeCatalogue = (ids: string[]) => writeFileSync(catalogue, JSON.stringify({ products: Object.fromEntries(ids.map((id) => [id, { type: "cpanel" }])) }));
    writeCatalogue(["12"]);
    writeFileSync(envFile, `ADMIN_TOKEN=${TEST_ADMIN_TOKEN}\nPRODUCTS_FILE=${catalogue}\n`);
    const env = await testBridgeEnv(sb.running, dir, { PORT: String(await freePort()), LOG_LEVEL: "info", ENV_FILE: envFile });
    child = await spawnBridge(env);
    const bridge = child;
    const hangup = async (what: string, until: () => Promise<boolean>) => {
      bridge.proc.kill("SIGHUP");
      await explained(waitFor(until, 10_000, what), () => ({ bridge: bridge.output() }));
    };
    expect(await adminStatus(bridge.url, TEST_ADMIN_TOKEN)).toBe(200);
    expect(await adminStatus(bridge.url, NEW_TOKEN)).toBe(401);

    writeFileSync(envFile, `ADMIN_TOKEN=${TEST_ADMIN_TOKEN},${NEW_TOKEN}\nPRODUCTS_FILE=${catalogue}\n`);
    // Waited for in the log, not by trying the new token: ten tries before the reload would lock this address out.
    const reloaded = () => lines(bridge).filter((l) => l.msg === "SIGHUP: configuration reloaded").length;
    await hangup("the new token to be accepted", async () => reloaded() === 1);
    expect(await adminStatus(bridge.url, NEW_TOKEN)).toBe(200);
    expect(await adminStatus(bridge.url, TEST_ADMIN_TOKEN)).toBe(200);

    writeFileSync(envFile, `ADMIN_TOKEN=${NEW_TOKEN}\nPRODUCTS_FILE=${catalogue}\n`);
    await hangup("the old token to be refused", async () => (await adminStatus(bridge.url, TEST_ADMIN_TOKEN)) === 401);
    expect(await adminStatus(bridge.url, NEW_TOKEN)).toBe(200);
    expect(lines(bridge).filter((l) => l.msg === "SIGHUP: configuration reloaded").map((l) => l.changed)).toEqual([["ADMIN_TOKEN"], ["ADMIN_TOKEN"]]);

    // A catalogue with a new product: an order for it is taken after the reload, refused before.
    expect((await sendTo(bridge.url, createdEvent({ product_id: "77", ip: "192.0.2.71" }))).status).toBe(422);
    writeCatalogue(["12", "77"]);
    await hangup("the new product to be taken", async () => (await sendTo(bridge.url, createdEvent({ product_id: "77", ip: "192.0.2.72" }))).status === 202);

    // Broken: a token too short and a catalogue that is not JSON. Refused loudly; the running configuration stays.
    writeFileSync(envFile, `ADMIN_TOKEN=short\nPRODUCTS_FILE=${catalogue}\n`);
    writeFileSync(catalogue, "{ not json");
    await hangup("the refusal to be logged", async () => lines(bridge).some((l) => l.msg.startsWith("SIGHUP: the new configuration is invalid")));
    const refusal = lines(bridge).find((l) => l.msg.startsWith("SIGHUP: the new configuration is invalid"))!;
    expect(refusal.level).toBe(50);
    expect((refusal.problems as string[]).map((p) => p.split(":")[0]).sort()).toEqual(["ADMIN_TOKEN", "PRODUCTS_FILE"]);
    expect(await adminStatus(bridge.url, NEW_TOKEN)).toBe(200);
    expect((await sendTo(bridge.url, createdEvent({ product_id: "77", ip: "192.0.2.73" }))).status).toBe(202);
    expect(bridge.output()).not.toContain(NEW_TOKEN);
    expect(bridge.proc.exitCode).toBeNull();
  });
});
