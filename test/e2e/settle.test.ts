import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { testBridgeEnv, createdEvent, serviceEvent, startTestBridge, startTestSandbox, type TestBridge, type TestSandbox } from "../helpers/bridge.js";
import { adminGet, explained, freePort, sendTo, spawnBridge, type ChildBridge } from "../helpers/e2e-child.js";
import { runDueJobs, untilIdle, untilUpstreamDone, upstreamCalls, waitForBridge, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";

/**
 * A charging call whose answer was lost is never sent again while the reseller may still be
 * carrying it out: the bridge waits RESELLER_SETTLE_SECONDS before the licence list decides.
 * The sandbox's `hold` fault plays a slow reseller: it keeps a request longer than the bridge's
 * timeout and then carries it out anyway. In-process bridges run on a manual clock: a test moves
 * it past the window once the held call has run to its end, instead of waiting the window out.
 */

const DAY = 86_400_000;
const inDays = (days: number) => new Date(Date.now() + days * DAY).toISOString().slice(0, 10);

let sb: TestSandbox | undefined;
let bridge: TestBridge | undefined;
afterEach(async () => {
  await bridge?.close();
  await sb?.close();
  bridge = sb = undefined;
});

const charges = (op: string) => sb!.sandbox.ledger().filter((c) => c.op === op);

let clock = manualClock();

/** A bridge with a short timeout, on a manual clock standing at now, against a fresh sandbox. */
async function slowReseller(settleSeconds: number): Promise<TestBridge> {
  sb = await startTestSandbox();
  clock = manualClock(Date.now());
  // A lead of 40 days makes a fresh monthly licence due for renewal at once.
  bridge = await startTestBridge(sb, {
    clock,
    env: { RESELLER_TIMEOUT_MS: "300", RESELLER_SETTLE_SECONDS: String(settleSeconds), RENEWAL_LEAD_DAYS: "40" },
  });
  return bridge;
}

/** Once the reseller has carried out every call it held, moves the bridge's clock past the settle window and runs what falls due. */
async function settleWindowPasses(b: TestBridge, settleSeconds: number): Promise<void> {
  await untilUpstreamDone(sb!);
  clock.advance(settleSeconds * 1_000);
  await runDueJobs(b);
}

/** The first job of `kind`, once it waits out a settle window (queued, its last error naming the setting). */
function waitingOutTheWindow(b: TestBridge, kind: string) {
  return waitForBridge(
    b,
    async () => {
      const [job] = await b.service.queue.list({ kind });
      return job?.state === "queued" && job.lastError?.includes("RESELLER_SETTLE_SECONDS") && job;
    },
    5_000,
    `the ${kind} job to wait out the settle window`,
  );
}

describe("settle window: a slow reseller finishes a charge after the bridge gave up", () => {
  // A sandbox and bridge per test, not per file: each test sets its own window, holds the
  // sandbox's next call (a fault of the whole sandbox), and counts every charge and call of a kind
  // the sandbox saw.
  it("a renewal that times out and is carried out later is paid once", async () => {
    const b = await slowReseller(3);
    const id = createdEvent({ next_due_date: inDays(365) });
    await b.send(id);
    const term = (await waitStatus(b, id.service.id, "active")).expires_at!;
    sb!.sandbox.setFaults({ holdMs: 1_500, holdNext: 1 });

    expect((await b.service.sweep.sweep()).queued).toHaveLength(1);
    await waitFor(() => upstreamCalls(sb!, "renew").length === 1, 5_000, "the renewal to reach the reseller");
    // Within the window the job waits: it neither renews again nor asks the list too early, even
    // after the reseller has carried the call out.
    await waitingOutTheWindow(b, "renew");
    await untilUpstreamDone(sb!);
    const lists = upstreamCalls(sb!, "list").length;
    clock.advance(3_000 - 1);
    await runDueJobs(b);
    expect((await b.service.queue.list({ kind: "renew" }))[0]).toMatchObject({ state: "queued", lastError: expect.stringMatching(/RESELLER_SETTLE_SECONDS/) });
    expect(upstreamCalls(sb!, "renew")).toHaveLength(1);
    expect(upstreamCalls(sb!, "list")).toHaveLength(lists);

    clock.advance(1);
    await runDueJobs(b);
    expect(await b.service.queue.list({ kind: "renew", state: "succeeded" })).toHaveLength(1);
    expect(upstreamCalls(sb!, "renew")).toEqual([expect.objectContaining({ held: true })]);
    expect(charges("renew")).toHaveLength(1);
    expect((await b.service.services.get(id.service.id))!.expires_at!).toBeGreaterThan(term);
    expect((await b.service.services.history(id.service.id)).at(-1)).toMatchObject({ action: "renewed", detail: expect.stringContaining("confirmed by the licence list") });
  });

  it("without the window (shorter than the reseller's delay), the same renewal is paid twice: the window is what prevents it", async () => {
    const b = await slowReseller(0);
    const id = createdEvent({ next_due_date: inDays(365) });
    await b.send(id);
    await waitStatus(b, id.service.id, "active");
    sb!.sandbox.setFaults({ holdMs: 1_500, holdNext: 1 });
    await b.service.sweep.sweep();
    await waitFor(() => charges("renew").length === 2, 10_000, "the second charge");
    expect(upstreamCalls(sb!, "renew")).toHaveLength(2);
  });

  it("a registration that times out and is carried out later is bought once", async () => {
    const b = await slowReseller(3);
    sb!.sandbox.setFaults({ holdMs: 1_500, holdNext: 1 });
    const order = createdEvent();
    expect((await b.send(order)).status).toBe(202);
    await waitingOutTheWindow(b, "register");
    await settleWindowPasses(b, 3);
    await waitStatus(b, order.service.id, "active", 10_000);
    await untilIdle(b);
    expect(upstreamCalls(sb!, "register")).toEqual([expect.objectContaining({ held: true })]);
    expect(charges("register")).toHaveLength(1);
    expect((await b.service.services.history(order.service.id)).find((h) => h.action === "registered")?.detail).toMatch(/found upstream after a lost answer/);
  });

  it("a termination accepted while a registration's answer is settled: no install mail goes out", async () => {
    const b = await slowReseller(2);
    sb!.sandbox.setFaults({ holdMs: 800, holdNext: 1 });
    const order = createdEvent();
    expect((await b.send(order)).status).toBe(202);
    await waitingOutTheWindow(b, "register");
    expect((await b.send(serviceEvent("service.terminated", order.service.id))).status).toBe(202);

    await settleWindowPasses(b, 2);
    await waitStatus(b, order.service.id, "terminated", 15_000);
    await untilIdle(b);
    const actions = (await b.service.services.history(order.service.id)).map((h) => h.action);
    expect(actions).toContain("registered");
    expect(actions).not.toContain("install mail sent");
    expect(actions).toContain("install mail skipped");
    expect(await b.service.queue.list({ kind: "mail_install", state: "succeeded" })).toHaveLength(1);
    expect(charges("register")).toHaveLength(1);
  });

  it("a wait is not a failure: it spends no attempt beyond the call that lost its answer", async () => {
    const b = await slowReseller(2);
    sb!.sandbox.setFaults({ holdMs: 800, holdNext: 1 });
    const order = createdEvent();
    await b.send(order);
    await waitingOutTheWindow(b, "register");
    await settleWindowPasses(b, 2);
    await waitStatus(b, order.service.id, "active", 10_000);
    // One attempt for the call that timed out, one for the list check that found it done. (The job's
    // ending commits just after the handler's own write that made the service active.)
    const job = await waitForBridge(b, async () => (await b.service.queue.list({ kind: "register" })).find((j) => j.state === "succeeded"), 5_000, "the registration job to succeed");
    expect(job).toMatchObject({ state: "succeeded", attempts: 2 });
  });
});

describe("settle window across a crash", () => {
  let dir: string | undefined;
  const children: ChildBridge[] = [];
  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.kill()));
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("SIGKILL while the reseller holds a renewal: after the restart it waits, then finds it done; one charge", { timeout: 60_000 }, async () => {
    sb = await startTestSandbox();
    dir = mkdtempSync(join(tmpdir(), "lb-settle-"));
    const env = await testBridgeEnv(sb.running, dir, {
      PORT: String(await freePort()),
      RESELLER_SETTLE_SECONDS: "4",
      RENEWAL_LEAD_DAYS: "40",
      RENEWAL_CRON: "* * * * * *",
    });
    const first = await spawnBridge(env);
    children.push(first);
    const seen = () => ({ "bridge output": children.map((c) => c.output()).join("\n--- restarted ---\n"), "sandbox requests": sb!.sandbox.requests() });
    const order = createdEvent({ next_due_date: inDays(365) });
    sb.sandbox.setFaults({ holdMs: 2_500, holdNext: 0 });
    expect((await sendTo(first.url, order)).status).toBe(202);
    await explained(waitFor(() => charges("register").length === 1, 10_000, "the registration"), seen);
    sb.sandbox.setFaults({ holdNext: 1 });
    await explained(waitFor(() => upstreamCalls(sb!, "renew").length === 1, 10_000, "the renewal to be held at the reseller"), seen);
    await first.kill();
    expect(charges("renew"), "killed before the reseller carried out the renewal").toHaveLength(0);

    const second = await spawnBridge(env);
    children.push(second);
    await explained(waitFor(() => charges("renew").length === 1, 10_000, "the held renewal to be carried out"), seen);
    await explained(
      waitFor(
        async () => {
          const { body } = await adminGet(second.url, `/admin/services/${order.service.id}`);
          return (body.history as { action: string }[] | undefined)?.some((h) => h.action === "renewed");
        },
        20_000,
        "the renewal recorded after the restart",
      ),
      seen,
    );
    expect(upstreamCalls(sb, "renew")).toHaveLength(1);
    expect(charges("renew")).toHaveLength(1);
  });
});
