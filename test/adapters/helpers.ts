import { createHmac } from "node:crypto";
import type { Server } from "node:http";
import { afterAll, beforeAll } from "vitest";
import { createApp } from "../../src/http/app.js";
import { systemClock, type Clock } from "../../src/clock.js";
import { silentLogger } from "../../src/log/logger.js";
import { adapterRouters } from "../../src/webhooks/adapters/index.js";
import { createIntake } from "../../src/intake/intake.js";
import { postTo } from "../helpers/e2e-harness.js";
import { startTestBridge, startTestSandbox, uniqueId, type TestBridge, type TestSandbox } from "../helpers/bridge.js";

export const HOSTBILL_SECRET = "hb-secret-0123456789abcdef";
export const UPMIND_SECRET = "upmind-secret-0123456789abcdef";
export const BLESTA_TOKEN = "blesta-token-0123456789abcdefghijklmnopqrstuv";

/** The env of a bridge with all three adapters configured. */
export const ALL_ADAPTERS = {
  HOSTBILL_WEBHOOK_SECRET: HOSTBILL_SECRET,
  UPMIND_WEBHOOK_SECRET: UPMIND_SECRET,
  BLESTA_WEBHOOK_TOKEN: BLESTA_TOKEN,
};

export interface AdapterHarness {
  sb: TestSandbox;
  bridge: TestBridge;
  /** Base URL of the app that mounts the adapter routers. */
  url: string;
  post(path: string, body: string, headers: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Events the intake stored for a service under a source (the panel), in order. */
  events(source: string, serviceId: string): Promise<{ id: string; type: string; webhook_id: string; service_id: string }[]>;
  /** Events stored in all, whatever their source. */
  eventCount(): Promise<number>;
  close(): Promise<void>;
}

/**
 * The real bridge on the test sandbox, plus a small app that mounts the adapter routers on the
 * bridge's own store, intake and catalogue, exactly as src/compose/service.ts would: the bridge's
 * job runner then does the upstream work of what the adapters accept.
 */
export interface AdapterHarnessOptions {
  /** What the adapter routes judge time by (signature windows, Upmind's dedupe day); the bridge keeps its own. */
  clock?: Clock;
}

export async function startAdapterHarness(env: Record<string, string>, options: AdapterHarnessOptions = {}): Promise<AdapterHarness> {
  const sb = await startTestSandbox();
  let bridge: TestBridge;
  try {
    bridge = await startTestBridge(sb, { env });
  } catch (err) {
    await sb.close();
    throw err;
  }
  const { store, services } = bridge.service;
  const config = bridge.config;
  const accept = createIntake({ store, catalog: config.catalog });
  const app = createApp({
    logger: silentLogger(),
    logRequests: false,
    isBusy: (err) => store.isBusy(err),
    routers: adapterRouters(config, { accept, clock: options.clock ?? systemClock, logger: silentLogger(), services }),
  });
  const server = await new Promise<Server>((ok, fail) => {
    const s = app.listen(0, "127.0.0.1", () => ok(s));
    s.once("error", fail);
  });
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  return {
    sb,
    bridge,
    url,
    post: (path, body, headers) => postTo(url, path, headers, body),
    async events(source, serviceId) {
      // Received events are the service's history entries "received <type>", in order.
      const ids = (await services.history(serviceId)).filter((h) => h.action.startsWith("received ") && h.event_id !== null).map((h) => h.event_id!);
      const rows = await Promise.all(ids.map((id) => store.events.get(id)));
      return rows.filter((e) => e !== undefined && e.source === source).map((e) => ({ id: e!.id, type: e!.type, webhook_id: e!.webhook_id, service_id: e!.service_id }));
    },
    eventCount: async () => (await store.counts()).events,
    async close() {
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
      try {
        await bridge.close();
      } finally {
        await sb.close();
      }
    },
  };
}

/** One harness for the calling `describe` (tests use their own service ids and IPs). */
export function useAdapterHarness(env: Record<string, string> | (() => Record<string, string>), options: AdapterHarnessOptions = {}): () => AdapterHarness {
  let h: AdapterHarness | undefined;
  beforeAll(async () => {
    h = await startAdapterHarness(typeof env === "function" ? env() : env, options);
  });
  afterAll(async () => {
    await h?.close();
    h = undefined;
  });
  return () => {
    if (!h) throw new Error("useAdapterHarness: no harness outside a test");
    return h;
  };
}

let ipSeq = 0;
/** A fresh documentation-range IP per call, so tests sharing a sandbox never collide. */
export function freshIp(): string {
  ipSeq += 1;
  return `198.51.${100 + Math.floor(ipSeq / 250)}.${(ipSeq % 250) + 1}`;
}

let idSeq = 4700;
/** A panel-style numeric id, unique within the test file. */
export function numericId(): string {
  idSeq += 1;
  return String(idSeq);
}

export { uniqueId };

// ---- signing, as each panel does it ----------------------------------------------------------

export function hostbillHeaders(body: string, o: { secret?: string; nowMs?: number; timestamp?: string } = {}): Record<string, string> {
  const ts = o.timestamp ?? String(Math.floor((o.nowMs ?? Date.now()) / 1000));
  const sig = createHmac("sha256", o.secret ?? HOSTBILL_SECRET).update(ts + body).digest("hex");
  return { "content-type": "application/json", "HB-Timestamp": ts, "HB-Signature": sig };
}

export function upmindHeaders(body: string, o: { secret?: string; encoding?: "hex" | "base64" } = {}): Record<string, string> {
  const sig = createHmac("sha256", o.secret ?? UPMIND_SECRET).update(body).digest(o.encoding ?? "hex");
  return { "content-type": "application/json", "X-Webhook-Signature": sig };
}

export function blestaHeaders(event: string): Record<string, string> {
  return { "content-type": "application/json", "X-Blesta-Event": event, "X-Webhook-Id": "3", "User-Agent": "Blesta-Webhook" };
}
