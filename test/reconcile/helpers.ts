import type { ReconcileDeps } from "../../src/reconcile/reconcile.js";
import { createV1Client, type V1Client } from "../../src/reseller/v1.js";
import type { TestBridge, TestSandbox } from "../helpers/bridge.js";
import { upstreamCalls } from "../helpers/e2e-harness.js";
import { DEFAULT_SANDBOX_TOKENS } from "../../src/vocabulary/sandbox-identity.js";
import { createClnClient, type ClnClient } from "../../src/providers/cln/index.js";
import { createManage2Client, type Manage2Client } from "../../src/providers/manage2/index.js";
import { DEFAULT_CLN_SANDBOX_ACCOUNT } from "../../src/vocabulary/cln-sandbox-identity.js";
import { DEFAULT_MANAGE2_SANDBOX_CREDENTIALS } from "../../src/vocabulary/manage2-sandbox-identity.js";
import type { ProviderSandboxes } from "../helpers/providers.js";

/** What reconcile needs, taken from a running test bridge. */
export function depsOf(bridge: TestBridge): ReconcileDeps {
  const { store, upstream } = bridge.service;
  return { store, upstream };
}

/** The reseller's real v1 API with the sandbox's reseller token: changes made behind the bridge's back. */
export function behindTheBridge(sb: TestSandbox): V1Client {
  return createV1Client({ baseUrl: sb.running.apiUrl, token: DEFAULT_SANDBOX_TOKENS.reseller, timeoutMs: 2000 });
}

/** Charges in the sandbox ledger and purchase calls it received, to show a run bought nothing. */
export function purchases(sb: TestSandbox): { charges: number; calls: number } {
  return { charges: sb.sandbox.ledger().length, calls: upstreamCalls(sb, "register", "renew", "bundle-register").length };
}

/** Manage2's real API with the sandbox's credentials: changes made behind the bridge's back. */
export function manage2BehindTheBridge(sbs: Pick<ProviderSandboxes, "manage2Running">): Manage2Client {
  return createManage2Client({ baseUrl: sbs.manage2Running.url, user: DEFAULT_MANAGE2_SANDBOX_CREDENTIALS.user, password: DEFAULT_MANAGE2_SANDBOX_CREDENTIALS.password, timeoutMs: 2000 });
}

/** CLN's real API with the sandbox's account: changes made behind the bridge's back. */
export function clnBehindTheBridge(sbs: Pick<ProviderSandboxes, "clnRunning">): ClnClient {
  return createClnClient({ baseUrl: sbs.clnRunning.url, login: DEFAULT_CLN_SANDBOX_ACCOUNT.login, secretKey: DEFAULT_CLN_SANDBOX_ACCOUNT.secretKey, timeoutMs: 2000 });
}
