import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import type { Clock } from "../../src/clock.js";
import type { Logger } from "../../src/log/logger.js";
import type { RecordedRequest } from "../../src/sandbox/app.js";
import type { ServiceStatus } from "../../src/vocabulary/service-statuses.js";
import { signWebhook } from "../../src/webhooks/signature.js";
import {
  createdEvent,
  idle,
  startTestBridge,
  startTestSandbox,
  TEST_SECRET,
  uniqueId,
  type TestBridge,
  type TestSandbox,
} from "./bridge.js";
import { waitFor, type Truthy } from "./wait.js";

export interface Pair {
  sb: TestSandbox;
  bridge: TestBridge;
}

export interface PairOptions {
  env?: Record<string, string>;
  /** The bridge's clock, e.g. a `manualClock` the test moves. (Default: the system clock) */
  clock?: Clock;
  logger?: Logger;
  sandbox?: Parameters<typeof startTestSandbox>[0];
  /** Starts the bridge on the sandbox, for a bridge built otherwise (e.g. `startMailBridge`). (Default: `startTestBridge` with `env`.) */
  bridge?: (sb: TestSandbox) => Promise<TestBridge>;
}

export interface PairPerFileOptions extends PairOptions {
  /** Runs once, after both have started and before the first test: orders, parked jobs, a stopped runner. */
  setup?: (pair: Pair) => Promise<void>;
  /** For starting both and `setup` together. (Default: vitest's hookTimeout) */
  timeoutMs?: number;
}

/** Starts a sandbox, then a bridge that buys from it; the sandbox is closed again if the bridge fails to start. */
async function startPair(options: PairOptions): Promise<Pair> {
  const sb = await startTestSandbox(options.sandbox);
  try {
    const { env, clock, logger } = options;
    const bridge = await (options.bridge ? options.bridge(sb) : startTestBridge(sb, { env, clock, logger }));
    return { sb, bridge };
  } catch (err) {
    await sb.close();
    throw err;
  }
}

async function closePair(pair: Pair | undefined): Promise<void> {
  if (!pair) return;
  try {
    await pair.bridge.close();
  } finally {
    await pair.sb.close();
  }
}

/**
 * A fresh sandbox and bridge for every test of the calling `describe`. Read the pair through
 * the returned getter inside tests (the objects change per test).
 */
export function usePair(options: PairOptions = {}): () => Pair {
  let pair: Pair | undefined;
  beforeEach(async () => {
    pair = await startPair(options);
  });
  afterEach(async () => {
    const p = pair;
    pair = undefined;
    await closePair(p);
  });
  return () => {
    if (!pair) throw new Error("usePair: no pair outside a test");
    return pair;
  };
}

/**
 * For a `describe` whose tests each start their pair their own way (their own env, a manual
 * clock, a sandbox without funds): returns a function a test calls, `const { sb, bridge } =
 * await startPair({ env, clock })`, and whatever a test started is closed after it.
 */
export function usePairInTest(): (options?: PairOptions) => Promise<Pair> {
  const started: Pair[] = [];
  afterEach(async () => {
    const errors: unknown[] = [];
    for (const p of started.splice(0).reverse()) await closePair(p).catch((err: unknown) => errors.push(err));
    if (errors.length > 0) throw errors[0];
  });
  return async (options = {}) => {
    const pair = await startPair(options);
    started.push(pair);
    return pair;
  };
}

/**
 * One sandbox and bridge shared by every test of the calling file or `describe` (beforeAll /
 * afterAll), for suites whose tests only read, or write under ids of their own: each test must
 * use service ids (and IPs) no other test of the file uses, since rows and the sandbox's ledger
 * carry over. `setup` runs once before the first test (the getter already answers inside it);
 * when it fails, the pair is closed at once.
 */
export function usePairPerFile(options: PairPerFileOptions = {}): () => Pair {
  let pair: Pair | undefined;
  beforeAll(async () => {
    pair = await startPair(options);
    try {
      await options.setup?.(pair);
    } catch (err) {
      const p = pair;
      pair = undefined;
      await closePair(p);
      throw err;
    }
  }, options.timeoutMs);
  afterAll(async () => {
    const p = pair;
    pair = undefined;
    await closePair(p);
  });
  return () => {
    if (!pair) throw new Error("usePairPerFile: the pair is not running (before the file's setup, after its tests, or its setup failed)");
    return pair;
  };
}

/** Rows in the two tables a webhook writes to. */
export async function rowCounts(bridge: TestBridge): Promise<{ events: number; jobs: number }> {
  const { events, jobs } = await bridge.service.store.counts();
  return { events, jobs };
}

/** How often a wait on a bridge looks without being told: for what its runner does not see (another process's work). */
const UNTOLD_LOOK_MS = 250;

/**
 * As `waitFor`, but looks again when the bridge's job runner has recorded an attempt or found
 * nothing due (`JobRunner.onSettled`), rather than on a timer: a wait on a job's outcome ends when
 * the outcome is written. A slow timer covers changes the runner does not make.
 */
export async function waitForBridge<T>(bridge: TestBridge, check: () => T | Promise<T>, timeoutMs = 10_000, what = "condition"): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  let told: () => void = () => undefined;
  const stop = bridge.service.runner.onSettled(() => told());
  let last: unknown;
  try {
    for (;;) {
      // Listening before looking: a settlement during the look is not missed.
      const next = new Promise<void>((resolve) => (told = resolve));
      try {
        const v = await check();
        if (v) return v as Truthy<T>;
      } catch (err) {
        last = err;
      }
      const left = deadline - Date.now();
      if (left < 0) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([next, new Promise((r) => (timer = setTimeout(r, Math.min(left + 1, UNTOLD_LOOK_MS))))]);
      clearTimeout(timer);
    }
  } finally {
    stop();
  }
}

/**
 * Runs what is due now on the bridge's runner and resolves when nothing runs and nothing more is
 * due (`JobRunner.whenIdle`): after moving a manual clock, instead of waiting for the next poll.
 */
export function runDueJobs(bridge: TestBridge): Promise<void> {
  return bridge.service.runner.whenIdle();
}

export async function waitStatus(bridge: TestBridge, serviceId: string, status: ServiceStatus, timeoutMs = 10_000) {
  let seen = "unknown";
  try {
    return await waitForBridge(
      bridge,
      async () => {
        const svc = await bridge.service.services.get(serviceId);
        seen = svc?.status ?? "unknown";
        return svc?.status === status && svc;
      },
      timeoutMs,
      `service ${serviceId} to be ${status}`,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message} (is ${seen})`, { cause: err });
  }
}

/** Nothing queued or running (a failed mail_install job, which has no handler yet, counts as settled). */
export async function untilIdle(bridge: TestBridge, timeoutMs = 10_000): Promise<void> {
  await waitForBridge(bridge, () => idle(bridge.service), timeoutMs, "the job queue to be idle");
}

/** Orders a service and waits until it is active; returns its id. */
export async function orderActive(bridge: TestBridge, over: Parameters<typeof createdEvent>[0] = {}): Promise<string> {
  const event = createdEvent(over);
  const res = await bridge.send(event);
  if (res.status !== 202) throw new Error(`service.created answered ${res.status}: ${JSON.stringify(res.body)}`);
  await waitStatus(bridge, event.service.id, "active");
  return event.service.id;
}

/**
 * Every call the sandbox received has run to its end: answered, dropped, or answered to a caller
 * that had given up (a client timeout, a killed bridge). What those calls charge is then in the
 * ledger, so a check that nothing more was charged cannot be raced by a call still under way.
 */
export async function untilUpstreamDone(sb: TestSandbox, timeoutMs = 10_000): Promise<void> {
  await waitFor(() => sb.sandbox.requests().every((r) => r.status !== 0), timeoutMs, "every upstream call to run to its end");
}

/** Upstream calls with one of these ops, in arrival order. */
export function upstreamCalls(sb: TestSandbox, ...ops: string[]): RecordedRequest[] {
  return sb.sandbox.requests().filter((r) => ops.includes(r.op));
}

/** A POST to the webhook with full control over headers and body (no defaults added). */
export function rawPost(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return postTo(url, "/webhooks/billing", headers, body);
}

/** A POST to any path with exactly these headers and body; the answer's JSON, or {} when it is not JSON. */
export async function postTo(
  url: string,
  path: string,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}${path}`, { method: "POST", headers, body });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON: keep {}
  }
  return { status: res.status, body: json };
}

/** Signed headers plus the JSON content type, for a body sent with `rawPost`. */
export function signedHeaders(body: string, options: { id?: string; secret?: string; nowMs?: number } = {}): Record<string, string> {
  return {
    "content-type": "application/json",
    ...signWebhook(options.secret ?? TEST_SECRET, options.id ?? uniqueId(), body, options.nowMs ?? Date.now()),
  };
}

/** A `whsec_` secret other than TEST_SECRET. */
export const OTHER_SECRET = "whsec_" + Buffer.from("another-secret-fedcba9876543210").toString("base64");

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
