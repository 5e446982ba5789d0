import { afterEach, beforeEach } from "vitest";
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
import { waitFor } from "./wait.js";

export interface Pair {
  sb: TestSandbox;
  bridge: TestBridge;
}

export interface PairOptions {
  env?: Record<string, string>;
  sandbox?: Parameters<typeof startTestSandbox>[0];
}

/**
 * A fresh sandbox and bridge for every test of the calling `describe`. Read the pair through
 * the returned getter inside tests (the objects change per test).
 */
export function usePair(options: PairOptions = {}): () => Pair {
  let pair: Pair | undefined;
  beforeEach(async () => {
    const sb = await startTestSandbox(options.sandbox);
    try {
      const bridge = await startTestBridge(sb, { env: options.env });
      pair = { sb, bridge };
    } catch (err) {
      await sb.close();
      throw err;
    }
  });
  afterEach(async () => {
    const p = pair;
    pair = undefined;
    if (!p) return;
    try {
      await p.bridge.close();
    } finally {
      await p.sb.close();
    }
  });
  return () => {
    if (!pair) throw new Error("usePair: no pair outside a test");
    return pair;
  };
}

/** Rows in the two tables a webhook writes to. */
export async function rowCounts(bridge: TestBridge): Promise<{ events: number; jobs: number }> {
  const { events, jobs } = await bridge.service.store.counts();
  return { events, jobs };
}

export async function waitStatus(bridge: TestBridge, serviceId: string, status: ServiceStatus, timeoutMs = 10_000) {
  let seen = "unknown";
  try {
    return await waitFor(
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
  await waitFor(() => idle(bridge.service), timeoutMs, "the job queue to be idle");
}

/** Orders a service and waits until it is active; returns its id. */
export async function orderActive(bridge: TestBridge, over: Parameters<typeof createdEvent>[0] = {}): Promise<string> {
  const event = createdEvent(over);
  const res = await bridge.send(event);
  if (res.status !== 202) throw new Error(`service.created answered ${res.status}: ${JSON.stringify(res.body)}`);
  await waitStatus(bridge, event.service.id, "active");
  return event.service.id;
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
