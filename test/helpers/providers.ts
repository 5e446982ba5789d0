import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach } from "vitest";
import type { Clock } from "../../src/clock.js";
import { createClnSandbox, type ClnSandbox, type ClnSandboxOptions, type RunningClnSandbox } from "../../src/sandbox/cln/app.js";
import { createManage2Sandbox, type Manage2Sandbox, type Manage2SandboxOptions, type RunningManage2Sandbox } from "../../src/sandbox/manage2/app.js";
import { DEFAULT_CLN_SANDBOX_ACCOUNT } from "../../src/vocabulary/cln-sandbox-identity.js";
import { DEFAULT_MANAGE2_SANDBOX_CREDENTIALS } from "../../src/vocabulary/manage2-sandbox-identity.js";
import { bridgeEnv, createdEvent, startBridgeWithEnv, startTestSandbox, TEST_ADMIN_TOKEN, TEST_PROVISIONING_TOKEN, TEST_SECRET, type TestBridge, type TestSandbox } from "./bridge.js";
import { waitStatus } from "./e2e-harness.js";
import { databaseEnv } from "./test-store.js";

/**
 * A bridge that buys from all three providers at once, each a sandbox of its own over loopback
 * (service-contract.md section 12): the reseller's, cPanel Manage2's and CloudLinux CLN's, and a
 * catalogue of products of each (test/helpers/providers-products.json):
 *
 * - 12: the reseller's cPanel;
 * - 40, 43: Manage2 cPanel, packages 12345 (group 678) and 12346;
 * - 41, 45: CLN CloudLinux OS, types 1 and 1002; 42, 44: CLN Imunify360, types 41 and 42.
 */

export const MIXED_CATALOGUE = resolve(import.meta.dirname, "providers-products.json");
/** Products 40 (Manage2) and 41 (CLN) alone: a bridge with no reseller. */
export const PROVIDERS_ONLY_CATALOGUE = resolve(import.meta.dirname, "providers-only-products.json");

export const MANAGE2_ADMIN = 12345;
export const MANAGE2_PRO = 12346;
export const CLN_CLOUDLINUX = 1;
export const CLN_CLOUDLINUX_PRO = 1002;
export const CLN_IMUNIFY_SINGLE = 41;
export const CLN_IMUNIFY_30 = 42;

export interface ProviderSandboxes {
  reseller: TestSandbox;
  manage2: Manage2Sandbox;
  manage2Running: RunningManage2Sandbox;
  cln: ClnSandbox;
  clnRunning: RunningClnSandbox;
  close(): Promise<void>;
}

export interface ProviderSandboxOptions {
  manage2?: Manage2SandboxOptions;
  cln?: ClnSandboxOptions;
}

export async function startProviderSandboxes(options: ProviderSandboxOptions = {}): Promise<ProviderSandboxes> {
  const reseller = await startTestSandbox();
  const manage2 = createManage2Sandbox(options.manage2);
  const manage2Running = await manage2.listen();
  const cln = createClnSandbox(options.cln);
  const clnRunning = await cln.listen();
  return {
    reseller,
    manage2,
    manage2Running,
    cln,
    clnRunning,
    async close() {
      await Promise.all([reseller.close(), manage2Running.close(), clnRunning.close()]);
    },
  };
}

/** Manage2's and CLN's settings for these sandboxes: the sandboxes' built-in credentials, their URLs. */
export function providerSettings(sbs: Pick<ProviderSandboxes, "manage2Running" | "clnRunning">): Record<string, string> {
  return {
    MANAGE2_USER: DEFAULT_MANAGE2_SANDBOX_CREDENTIALS.user,
    MANAGE2_PASSWORD: DEFAULT_MANAGE2_SANDBOX_CREDENTIALS.password,
    MANAGE2_URL: sbs.manage2Running.url,
    CLN_LOGIN: DEFAULT_CLN_SANDBOX_ACCOUNT.login,
    CLN_SECRET_KEY: DEFAULT_CLN_SANDBOX_ACCOUNT.secretKey,
    CLN_URL: sbs.clnRunning.url,
  };
}

export interface ProviderBridgeOptions {
  env?: Record<string, string>;
  clock?: Clock;
  /** Configure no reseller at all: the providers-only catalogue, no RESELLER_* setting. (Default: false) */
  withoutReseller?: boolean;
}

/** A bridge on the run's store buying from the three sandboxes with the mixed catalogue (or from Manage2 and CLN alone). */
export async function startProviderBridge(sbs: ProviderSandboxes, options: ProviderBridgeOptions = {}): Promise<TestBridge> {
  const dir = mkdtempSync(join(tmpdir(), "lb-providers-"));
  const store = await databaseEnv({ migrated: true });
  const base = options.withoutReseller
    ? {
        HOST: "127.0.0.1",
        PORT: "0",
        DATABASE_PATH: join(dir, "bridge.db"),
        WEBHOOK_SECRETS: TEST_SECRET,
        ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        PROVISIONING_TOKEN: TEST_PROVISIONING_TOKEN,
        RESELLER_TIMEOUT_MS: "2000",
        RESELLER_SETTLE_SECONDS: "0",
        LOG_LEVEL: "silent",
        PRODUCTS_FILE: PROVIDERS_ONLY_CATALOGUE,
      }
    : bridgeEnv(sbs.reseller.running, dir, { PRODUCTS_FILE: MIXED_CATALOGUE });
  const env = { ...base, ...store, ...providerSettings(sbs), ...options.env };
  return startBridgeWithEnv(env, dir, { ...(options.clock ? { clock: options.clock } : {}) });
}

export interface ProviderPair {
  sbs: ProviderSandboxes;
  bridge: TestBridge;
}

/**
 * For tests that each start their own sandboxes and bridge (their own faults, clock or dialect):
 * `const { sbs, bridge } = await start({ clock })`; whatever a test started is closed after it.
 */
export function useProviderBridges(): (options?: ProviderBridgeOptions & { sandboxes?: ProviderSandboxOptions }) => Promise<ProviderPair> {
  const started: ProviderPair[] = [];
  afterEach(async () => {
    for (const p of started.splice(0).reverse()) {
      try {
        await p.bridge.close();
      } finally {
        await p.sbs.close();
      }
    }
  });
  return async (options = {}) => {
    const sbs = await startProviderSandboxes(options.sandboxes);
    try {
      const bridge = await startProviderBridge(sbs, options);
      started.push({ sbs, bridge });
      return { sbs, bridge };
    } catch (err) {
      await sbs.close();
      throw err;
    }
  };
}

/** Orders product `product_id` and waits until the service is active; returns its id. */
export async function orderActiveOf(bridge: TestBridge, product_id: string, ip: string): Promise<string> {
  const event = createdEvent({ product_id, ip });
  const res = await bridge.send(event);
  if (res.status !== 202) throw new Error(`service.created answered ${res.status}: ${JSON.stringify(res.body)}`);
  await waitStatus(bridge, event.service.id, "active");
  return event.service.id;
}
