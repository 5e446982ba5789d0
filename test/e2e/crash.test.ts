import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { testBridgeEnv, createdEvent, startTestSandbox, type TestSandbox } from "../helpers/bridge.js";
import { adminGet, freePort, sendTo, spawnBridge, type ChildBridge } from "../helpers/e2e-child.js";
import { waitFor } from "../helpers/wait.js";

const ORDERS = 30;

describe("crash: SIGKILL while registrations are in flight", () => {
  let sb: TestSandbox | undefined;
  let dir: string | undefined;
  const children: ChildBridge[] = [];

  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.kill()));
    await sb?.close();
    sb = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("resumes after a restart and buys each of 30 licences exactly once", { timeout: 90_000 }, async () => {
    sb = await startTestSandbox({ faults: { latencyMs: 40 } });
    dir = mkdtempSync(join(tmpdir(), "lb-crash-"));
    const env = await testBridgeEnv(sb.running, dir, { PORT: String(await freePort()), LOG_LEVEL: "silent" });

    const first = await spawnBridge(env);
    children.push(first);
    const orders = Array.from({ length: ORDERS }, (_, i) => createdEvent({ id: `crash-${i}`, ip: `198.51.100.${i + 1}` }));
    const answers = await Promise.all(orders.map((o) => sendTo(first.url, o)));
    expect(answers.map((a) => a.status)).toEqual(Array(ORDERS).fill(202));

    const sandbox = sb.sandbox;
    await waitFor(() => sandbox.ledger().length >= 10, 20_000, "10 charges before the kill");
    // Hold the next calls inside the sandbox so that some are surely in flight at the kill:
    // they commit (and charge) after the bridge is dead, which never hears of it.
    sandbox.setFaults({ latencyMs: 1_500 });
    const inFlight = () => sandbox.requests().filter((r) => r.op === "register" && r.status === 0);
    await waitFor(() => inFlight().length > 0, 10_000, "a register call in flight");
    await first.kill();
    const killedAt = Date.now();
    sandbox.setFaults({ latencyMs: 40 });
    // The held calls commit upstream although their caller is dead: wait until each has run to its end.
    await waitFor(() => inFlight().length === 0, 10_000, "the held register calls to run to their end");
    expect(sandbox.ledger().length, "the kill came too late to leave work unfinished").toBeLessThan(ORDERS);

    const second = await spawnBridge(env);
    children.push(second);
    const active = await waitFor(
      async () => {
        const { body } = await adminGet(second.url, "/admin/licenses?status=active");
        const licenses = (body.licenses ?? []) as { service_id: string }[];
        return licenses.length === ORDERS && licenses;
      },
      60_000,
      `all ${ORDERS} services active after the restart`,
    );
    // The contract: work a dead process held resumes within 30 s (the lease is 20 s).
    expect(Date.now() - killedAt, "time from the kill until every service was active").toBeLessThan(40_000);
    expect(active.map((l) => l.service_id).sort()).toEqual(orders.map((o) => o.service.id).sort());

    const registers = sandbox.ledger().filter((c) => c.op === "register");
    expect(registers).toHaveLength(ORDERS);
    expect(new Set(registers.map((c) => c.ip)).size).toBe(ORDERS);
    expect(sandbox.licenses().filter((l) => l.type === "cpanel")).toHaveLength(ORDERS);
  });
});
