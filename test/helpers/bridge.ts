import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadConfig, type Config } from "../../src/config/load.js";
import type { Clock } from "../../src/clock.js";
import type { JobDefinition } from "../../src/jobs/define.js";
import { silentLogger, type Logger } from "../../src/log/logger.js";
import { createSandbox, type RunningSandbox, type Sandbox, type SandboxOptions } from "../../src/sandbox/app.js";
import { startService, type RunningService, type ServiceOptions } from "../../src/compose/service.js";
import { signWebhook } from "../../src/webhooks/signature.js";
import { databaseEnv } from "./test-store.js";
import { DEFAULT_SANDBOX_TOKENS } from "../../src/vocabulary/sandbox-identity.js";

export const TEST_SECRET = "whsec_" + Buffer.from("test-secret-0123456789abcdef").toString("base64");
export const TEST_ADMIN_TOKEN = "test-admin-token-0123456789";
export const TEST_PROVISIONING_TOKEN = "test-provisioning-token-0123456789";

/**
 * The catalogue of the bridges here, which buy from the reseller sandbox alone: the shipped
 * example's reseller products (the shipped catalogue also has Manage2 and CLN products, and a
 * live bridge refuses to start with a product of a provider it is not given).
 */
/** The shipped catalogue: reseller products only, so a bridge configured for the reseller alone starts with it. */
export const RESELLER_CATALOGUE = resolve(import.meta.dirname, "../../config/products.json");

export interface TestSandbox {
  sandbox: Sandbox;
  running: RunningSandbox;
  close(): Promise<void>;
}

export async function startTestSandbox(options: SandboxOptions = {}): Promise<TestSandbox> {
  const sandbox = createSandbox(options);
  const running = await sandbox.listen(0, "127.0.0.1");
  return { sandbox, running, close: () => running.close() };
}

/**
 * Environment of a bridge that buys from `sandbox`, with a temp SQLite database in `dir`. For a
 * test that runs against either store, use `testBridgeEnv` (or a TestBridge's `env`).
 */
export function bridgeEnv(running: RunningSandbox, dir: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    HOST: "127.0.0.1",
    PORT: "0",
    DATABASE_PATH: join(dir, "bridge.db"),
    RESELLER_API_URL: running.apiUrl,
    RESELLER_API_TOKEN: DEFAULT_SANDBOX_TOKENS.reseller,
    RESELLER_LEGACY_URL: running.legacyUrl,
    RESELLER_LEGACY_TOKEN: DEFAULT_SANDBOX_TOKENS.legacy,
    WEBHOOK_SECRETS: TEST_SECRET,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    PROVISIONING_TOKEN: TEST_PROVISIONING_TOKEN,
    RESELLER_TIMEOUT_MS: "2000",
    // Tests of lost answers set their own window; the rest need not wait for one.
    RESELLER_SETTLE_SECONDS: "0",
    LOG_LEVEL: "silent",
    PRODUCTS_FILE: RESELLER_CATALOGUE,
    ...extra,
  };
}

/**
 * `bridgeEnv` plus the database of the run's store (LB_TEST_STORE): in the postgres project a
 * fresh database, empty or with `migrated` already migrated, unless `extra` names one.
 */
export async function testBridgeEnv(running: RunningSandbox, dir: string, extra: Record<string, string> = {}, options: { migrated?: boolean } = {}): Promise<Record<string, string>> {
  return bridgeEnv(running, dir, { ...(extra.DATABASE_URL ? {} : await databaseEnv(options)), ...extra });
}

export interface TestBridge {
  service: RunningService;
  config: Config;
  /** The environment it was started with: the CLI or another instance given it sees the same database. */
  env: Record<string, string>;
  url: string;
  dir: string;
  /** Signs and posts an event; returns status and JSON body. */
  send(event: unknown, options?: SendOptions): Promise<{ status: number; body: Record<string, unknown> }>;
  admin(path: string, init?: RequestInit): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Calls the provisioning API: a POST form by default (as Upmind and the PHP modules send), JSON or GET on request. */
  provision(call: string, params: Record<string, string | number | undefined>, options?: ProvisionOptions): Promise<{ status: number; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

export interface ProvisionOptions {
  as?: "form" | "json" | "query";
  method?: string;
  token?: string;
  headers?: Record<string, string>;
}

/** A provisioning API call against `url`, as a panel module makes it. */
export async function provisionAt(
  url: string,
  call: string,
  params: Record<string, string | number | undefined>,
  o: ProvisionOptions = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const defined = Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)]));
  const as = o.as ?? (call === "info" ? "query" : "form");
  const headers: Record<string, string> = { authorization: `Bearer ${o.token ?? TEST_PROVISIONING_TOKEN}`, ...o.headers };
  let target = `${url}/provision/v1/${call}`;
  let body: string | undefined;
  if (as === "query") target += `?${new URLSearchParams(defined)}`;
  else if (as === "json") {
    headers["content-type"] = "application/json";
    body = JSON.stringify(params);
  } else {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(defined).toString();
  }
  const res = await fetch(target, { method: o.method ?? (as === "query" ? "GET" : "POST"), headers, body });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
}

export interface SendOptions {
  id?: string;
  secret?: string;
  nowMs?: number;
  headers?: Record<string, string>;
  rawBody?: string;
}

let seq = 0;
export function uniqueId(prefix = "msg"): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${++seq}`;
}

export interface TestBridgeOptions {
  env?: Record<string, string>;
  clock?: Clock;
  jobs?: JobDefinition[];
  logger?: Logger;
  dir?: string;
  consoleOperators?: ServiceOptions["consoleOperators"];
}

export async function startTestBridge(sb: TestSandbox, options: TestBridgeOptions = {}): Promise<TestBridge> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "lb-test-"));
  // Started by the service, which would apply every migration to an empty database first.
  return startBridgeWithEnv(await testBridgeEnv(sb.running, dir, options.env, { migrated: true }), dir, options);
}

/** A bridge of exactly this environment (its database in it), its temp `dir` removed at close unless the caller gave one. */
export async function startBridgeWithEnv(env: Record<string, string>, dir: string, options: TestBridgeOptions = {}): Promise<TestBridge> {
  const config = loadConfig({ env, cwd: process.cwd() });
  const service = await startService({
    config,
    logger: options.logger ?? silentLogger(),
    clock: options.clock,
    pollMs: 50,
    baseDelayMs: 40,
    shutdownGraceMs: 2000,
    jobs: options.jobs,
    consoleOperators: options.consoleOperators,
  });
  const url = service.url;
  return {
    service,
    config,
    env,
    url,
    dir,
    async send(event, o = {}) {
      const body = o.rawBody ?? JSON.stringify(event);
      const headers = signWebhook(o.secret ?? TEST_SECRET, o.id ?? uniqueId(), body, o.nowMs ?? Date.now());
      const res = await fetch(`${url}/webhooks/billing`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers, ...o.headers },
        body,
      });
      return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
    },
    async admin(path, init = {}) {
      const res = await fetch(`${url}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json", ...(init.headers as Record<string, string>) },
      });
      return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
    },
    provision: (call, params, o) => provisionAt(url, call, params, o),
    async close() {
      await service.close();
      if (!options.dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

let ipSeq = 0;
/**
 * A fresh public address per call (198.18.0.0/15, the benchmarking range the bridge accepts):
 * one licence belongs to one service, so orders that do not name an IP must not share one.
 */
export function uniqueIp(): string {
  const n = ipSeq++ % 64_000;
  return `198.18.${Math.floor(n / 250)}.${(n % 250) + 1}`;
}

/** A `service.created` body; override any part. The IP is a fresh one unless given. */
export function createdEvent(over: { id?: string; product_id?: string; ip?: string; cycle?: string; email?: string; next_due_date?: string } = {}) {
  return {
    type: "service.created",
    service: {
      id: over.id ?? uniqueId("svc"),
      product_id: over.product_id ?? "12",
      billing_cycle: over.cycle ?? "monthly",
      ip: over.ip ?? uniqueIp(),
      customer: { email: over.email ?? "ann@example.com", name: "Ann Example" },
      ...(over.next_due_date ? { next_due_date: over.next_due_date } : {}),
    },
  };
}

export function serviceEvent(type: string, serviceId: string, extra: Record<string, unknown> = {}) {
  return { type, service: { id: serviceId, ...((extra.service as object) ?? {}) }, ...(extra.changes ? { changes: extra.changes } : {}) };
}

/** Resolves true when the queue has nothing queued or running. */
export async function idle(service: RunningService): Promise<boolean> {
  const c = await service.queue.counts();
  return c.queued === 0 && c.running === 0;
}
