import type { ReconcileDeps } from "../../src/reconcile/reconcile.js";
import { createV1Client, type V1Client } from "../../src/reseller/v1.js";
import type { TestBridge, TestSandbox } from "../helpers/bridge.js";
import { upstreamCalls } from "../helpers/e2e-harness.js";
import { DEFAULT_SANDBOX_TOKENS } from "../../src/vocabulary/sandbox-identity.js";

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
