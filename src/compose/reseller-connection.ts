import { resolve } from "node:path";
import { z } from "zod";
import type { Config } from "../config/load.js";
import type { Logger } from "../log/logger.js";
import type { Metrics } from "../observability/metrics.js";
import type { RunningSandbox } from "../sandbox/app.js";
import { createConnectionPool, type ConnectionPool } from "../reseller/connection-pool.js";
import type { UpstreamObserver } from "../reseller/transport.js";
import { createV1Client, type V1Client } from "../reseller/v1.js";
import { createV2Client, type V2Client } from "../reseller/v2.js";
import type { ProviderName } from "../vocabulary/provider-names.js";
import { DEFAULT_SANDBOX_TOKENS } from "../vocabulary/sandbox-identity.js";
import { NO_RESELLER } from "./no-reseller.js";
import { leaveSandboxPointer, readSandboxPointer } from "./sandbox-pointer.js";

/**
 * The one place the reseller clients are built from configuration, for the service and the CLI
 * alike: the configured reseller, or in sandbox mode an embedded sandbox (the service starts
 * it; the CLI finds the running service's through `<dataDir>/sandbox-upstream.json`).
 */

export interface ResellerClients {
  v1: V1Client;
  v2: V2Client | null;
  /** The in-process sandbox in sandbox mode. */
  sandbox: RunningSandbox | null;
  close(): Promise<void>;
}

export interface ResellerEndpoints {
  v1: { url: string; token: string };
  v2: { url: string; token: string } | null;
}

/** Sandbox mode with no running service to find: the CLI has no reseller to talk to. */
export class NoResellerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NoResellerError";
  }
}

/**
 * Counts every call of `provider`'s clients in `metrics`, labelled with the provider, and logs it
 * as one info line: provider, operation, method, status, outcome, duration; never a body or URL.
 * Pass it as the clients' `observer` (tests that build their own reseller clients do so too, with
 * the `metrics` they give `startService`).
 */
export function observeUpstream(logger: Logger, metrics?: Metrics, provider: ProviderName = "reseller"): UpstreamObserver {
  return {
    callFinished(r) {
      metrics?.upstream.callFinished({ ...r, provider });
      logger.info(
        { provider, operation: r.operation, method: r.method, status: r.status, outcome: r.outcome, duration_ms: Math.round(r.durationMs * 100) / 100 },
        "upstream call",
      );
    },
  };
}

export interface ClientOptions {
  timeoutMs: number;
  logger: Logger;
  observer?: UpstreamObserver;
  /** Kept-alive connections shared by both clients, closed by their owner. (Default: each client its own) */
  pool?: ConnectionPool;
}

/** v1 and (when configured) v2 clients for these endpoints. */
export function createResellerClients(endpoints: ResellerEndpoints, o: ClientOptions): Omit<ResellerClients, "sandbox" | "close"> {
  const log = o.logger.child({ component: "reseller" });
  return {
    v1: createV1Client({ baseUrl: endpoints.v1.url, token: endpoints.v1.token, timeoutMs: o.timeoutMs, logger: log, observer: o.observer, pool: o.pool }),
    v2: endpoints.v2
      ? createV2Client({ baseUrl: endpoints.v2.url, token: endpoints.v2.token, timeoutMs: o.timeoutMs, logger: log, observer: o.observer, pool: o.pool })
      : null,
  };
}

const pointerSchema = z.object({ apiUrl: z.string(), legacyUrl: z.string().optional() });

/** Where the configured reseller is, with the reseller token or the admin one; in sandbox mode the running service's sandbox. */
export function resellerEndpoints(config: Config, role: "reseller" | "admin" = "reseller"): ResellerEndpoints {
  if (config.upstream.mode === "none") throw new NoResellerError(NO_RESELLER);
  if (config.upstream.mode === "live") {
    const token = role === "admin" ? (config.RESELLER_ADMIN_TOKEN ?? config.upstream.apiToken) : config.upstream.apiToken;
    return { v1: { url: config.upstream.apiUrl, token }, v2: config.upstream.legacy };
  }
  const pointer = resolve(config.dataDir, "sandbox-upstream.json");
  const found = readSandboxPointer(pointer, pointerSchema);
  if (found === "missing") {
    throw new NoResellerError("sandbox mode and no running service: start it (npm start), or set RESELLER_API_URL to a reseller (or to `npm run sandbox`)");
  }
  if (found === "invalid") throw new NoResellerError(`${pointer} is not what the service writes; restart the service`);
  const { apiUrl, legacyUrl } = found;
  return {
    v1: { url: apiUrl, token: role === "admin" ? DEFAULT_SANDBOX_TOKENS.admin : DEFAULT_SANDBOX_TOKENS.reseller },
    v2: legacyUrl ? { url: legacyUrl, token: DEFAULT_SANDBOX_TOKENS.legacy } : null,
  };
}

/** The service's clients: the configured reseller, or a sandbox started here (its address left for the CLI). */
export async function connectReseller(config: Config, logger: Logger, observer?: UpstreamObserver): Promise<ResellerClients> {
  // No reseller configured: nothing to connect to, and never a sandbox in its place.
  if (config.upstream.mode === "none") throw new NoResellerError(NO_RESELLER);
  // Kept-alive connections for v1 and v2 together: one per job slot, a few more for panels' reads.
  const pool = createConnectionPool({ maxSockets: config.WORKER_CONCURRENCY + 4 });
  const o = { timeoutMs: config.RESELLER_TIMEOUT_MS, logger, observer, pool };
  if (config.upstream.mode === "live") {
    return { ...createResellerClients(resellerEndpoints(config), o), sandbox: null, close: () => pool.close() };
  }
  // Loaded only here: a live service runs none of the sandbox's code.
  const { createSandbox } = await import("../sandbox/app.js");
  const sandbox = await createSandbox({
    statePath: resolve(config.dataDir, "sandbox-state.json"),
    logger: logger.child({ component: "sandbox" }),
  }).listen(0, "127.0.0.1");
  const removePointer = leaveSandboxPointer(resolve(config.dataDir, "sandbox-upstream.json"), { apiUrl: sandbox.apiUrl, legacyUrl: sandbox.legacyUrl });
  const endpoints: ResellerEndpoints = {
    v1: { url: sandbox.apiUrl, token: DEFAULT_SANDBOX_TOKENS.reseller },
    v2: { url: sandbox.legacyUrl, token: DEFAULT_SANDBOX_TOKENS.legacy },
  };
  return {
    ...createResellerClients(endpoints, o),
    sandbox,
    close: async () => {
      removePointer();
      await pool.close();
      await sandbox.close();
    },
  };
}
