import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/database.js";
import { bridgeEnv, createdEvent, startTestSandbox, type TestSandbox } from "../helpers/bridge.js";
import { adminGet, freePort, sendTo, spawnBridge, type ChildBridge } from "../helpers/e2e-child.js";
import { waitFor } from "../helpers/wait.js";

const ORDERS = 200;
const KILLS = 3;

/** A small seeded generator, so a failing run can be replayed with CHAOS_SEED. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

describe("chaos: faults upstream and three SIGKILLs lose nothing and buy nothing twice", () => {
  let sb: TestSandbox | undefined;
  let dir: string | undefined;
  let current: ChildBridge | undefined;

  afterEach(async () => {
    await current?.kill();
    await sb?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    sb = current = dir = undefined;
  });

  it("200 orders end active, charged once and mailed once", { timeout: 90_000 }, async () => {
    const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
    const random = seeded(seed);
    sb = await startTestSandbox({ balance: 1_000_000, faults: { latencyMs: 10, errorRate: 0.1, dropAfterCommitRate: 0.1 }, random });
    dir = mkdtempSync(join(tmpdir(), "lb-chaos-"));
    const env = bridgeEnv(sb.running, dir, {
      PORT: String(await freePort()),
      LOG_LEVEL: "silent",
      RETRY_MAX_DELAY_SECONDS: "2",
      RESELLER_TIMEOUT_MS: "3000",
    });
    const context = `(CHAOS_SEED=${seed})`;
    current = await spawnBridge(env);

    // The panel: each order keeps its webhook-id and is re-sent until the bridge acknowledges it.
    const orders = Array.from({ length: ORDERS }, (_, i) => ({
      id: `chaos-msg-${i}`,
      event: createdEvent({ id: `chaos-${i}`, ip: `10.20.${i >> 8}.${i & 255}`, email: `c${i}@example.com` }),
    }));
    const acknowledged = new Set<string>();
    const panel = (async () => {
      const deadline = Date.now() + 60_000;
      while (acknowledged.size < ORDERS && Date.now() < deadline) {
        const pending = orders.filter((o) => !acknowledged.has(o.id));
        await Promise.all(
          pending.slice(0, 25).map(async (o) => {
            try {
              const { status } = await sendTo(current!.url, o.event, o.id);
              if (status === 202 || status === 200) acknowledged.add(o.id);
            } catch {
              // The bridge is down: try again in a moment, as a panel's retry would.
            }
          }),
        );
        if (acknowledged.size < ORDERS) await new Promise((r) => setTimeout(r, 20));
      }
    })();

    for (let k = 0; k < KILLS; k++) {
      await new Promise((r) => setTimeout(r, 300 + random() * 1500));
      await current.kill();
      current = await spawnBridge(env);
    }
    await panel;
    expect(acknowledged.size, `every order acknowledged ${context}`).toBe(ORDERS);

    const mailed = () => {
      try {
        return readdirSync(join(dir!, "outbox")).filter((f) => f.endsWith(".eml"));
      } catch {
        return [];
      }
    };
    const progress = async () => {
      const jobs = ((await adminGet(current!.url, "/admin/jobs")).body.jobs ?? []) as { state: string; kind: string; last_error: string | null }[];
      const unfinished = jobs.filter((j) => j.state !== "succeeded");
      return `${mailed().length} mailed; unfinished jobs: ${JSON.stringify(unfinished.slice(0, 5))} (${unfinished.length})`;
    };
    await waitFor(
      async () => {
        const { body } = await adminGet(current!.url, "/admin/licenses?status=active");
        return (body.licenses as unknown[] | undefined)?.length === ORDERS && mailed().length >= ORDERS;
      },
      45_000,
      `all orders active and mailed ${context}`,
    ).catch(async (err: Error) => {
      throw new Error(`${err.message}; ${await progress()}`);
    });
    await current.kill();
    current = undefined;

    const registers = sb.sandbox.ledger().filter((c) => c.op === "register");
    expect(registers, `one charge per order ${context}`).toHaveLength(ORDERS);
    expect(new Set(registers.map((c) => c.ip)).size).toBe(ORDERS);

    const files = mailed();
    expect(files, `one mail per order ${context}`).toHaveLength(ORDERS);
    const recipients = files.map((f) => /^To: (.*)$/m.exec(readFileSync(join(dir!, "outbox", f), "utf8"))?.[1] ?? "");
    expect(new Set(recipients).size).toBe(ORDERS);

    const db = openDatabase(join(dir, "bridge.db"), { readonly: true });
    const states = db.prepare("SELECT state, COUNT(*) AS n FROM jobs GROUP BY state").all() as { state: string; n: number }[];
    db.close();
    expect(states.filter((s) => s.state !== "succeeded"), `no job left running, failed or blocked ${context}`).toEqual([]);
  });
});
