import { resolve } from "node:path";
import type { Config } from "../config/load.js";
import type { Logger } from "../log/logger.js";
import { createClnClient, type ClnClient } from "../providers/cln/index.js";
import { createManage2Client, type Manage2Client } from "../providers/manage2/index.js";
import { createConnectionPool } from "../reseller/connection-pool.js";
import type { UpstreamObserver } from "../reseller/transport.js";
import { leaveSandboxPointer } from "./sandbox-pointer.js";

/**
 * Manage2's and CLN's clients, built from configuration: the configured account at its URL, or
 * in sandbox mode an in-process sandbox of each (its state kept under the data directory, its
 * address left in `<dataDir>/sandbox-<provider>.json` for the CLI, as the reseller sandbox's is in
 * sandbox-upstream.json). A provider the configuration does not name is null; a live service
 * starts no sandbox, nor loads its code.
 */

export interface ProviderConnection<C> {
  client: C;
  /** Where the provider's API is, for /readyz. */
  url: string;
}

export interface ProviderConnections {
  manage2: ProviderConnection<Manage2Client> | null;
  cln: ProviderConnection<ClnClient> | null;
  /** A reloaded configuration's credentials (rotated in the provider's panel): the next call uses them. */
  rotate(was: Config, next: Config): void;
  close(): Promise<void>;
}

/** The file the CLI reads a running sandbox-mode service's sandbox of `provider` from. */
export const sandboxPointerOf = (config: Pick<Config, "dataDir">, provider: "manage2" | "cln"): string => resolve(config.dataDir, `sandbox-${provider}.json`);

/** Each provider's clients report their calls to an observer of their own, which names the provider (its metrics' label). */
export type ObserverFor = (provider: "manage2" | "cln") => UpstreamObserver | undefined;

export async function connectProviders(config: Config, logger: Logger, observerFor?: ObserverFor): Promise<ProviderConnections> {
  const closing: (() => unknown)[] = [];
  const close = async () => {
    for (const c of closing.splice(0).reverse()) await c();
  };
  try {
    // Kept-alive connections, one per job slot and a few more, shared by both providers' clients.
    const pool = createConnectionPool({ maxSockets: config.WORKER_CONCURRENCY + 4 });
    closing.push(() => pool.close());
    const common = (provider: "manage2" | "cln") => ({ timeoutMs: config.RESELLER_TIMEOUT_MS, observer: observerFor?.(provider), pool });
    const manage2 = await connectManage2(config, logger, common("manage2"), closing);
    const cln = await connectCln(config, logger, common("cln"), closing);
    return {
      manage2,
      cln,
      rotate(was, next) {
        const [m2Was, m2Now] = [was.providers.manage2, next.providers.manage2];
        if (manage2 && m2Was?.mode === "live" && m2Now?.mode === "live" && (m2Now.user !== m2Was.user || m2Now.password !== m2Was.password)) {
          manage2.client.setCredentials(m2Now.user, m2Now.password);
        }
        const [clnWas, clnNow] = [was.providers.cln, next.providers.cln];
        if (cln && clnWas?.mode === "live" && clnNow?.mode === "live" && (clnNow.login !== clnWas.login || clnNow.secretKey !== clnWas.secretKey)) {
          cln.client.setCredentials(clnNow.login, clnNow.secretKey);
        }
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

type Common = { timeoutMs: number; observer: UpstreamObserver | undefined; pool: ReturnType<typeof createConnectionPool> };

async function connectManage2(config: Config, logger: Logger, common: Common, closing: (() => unknown)[]): Promise<ProviderConnection<Manage2Client> | null> {
  const settings = config.providers.manage2;
  if (!settings) return null;
  const log = logger.child({ component: "manage2" });
  let url: string;
  if (settings.mode === "live") {
    url = settings.url;
  } else {
    // Loaded only here: a live service runs none of the sandbox's code.
    const { createManage2Sandbox } = await import("../sandbox/manage2/app.js");
    const sandbox = await createManage2Sandbox({ statePath: resolve(config.dataDir, "manage2-sandbox-state.json"), logger: log.child({ component: "manage2-sandbox" }) }).listen(0, "127.0.0.1");
    closing.push(() => sandbox.close());
    url = sandbox.url;
    leavePointer(config, "manage2", url, closing);
  }
  const client = createManage2Client({ baseUrl: url, user: settings.user, password: settings.password, ...common, logger: log });
  closing.push(() => client.close());
  return { client, url };
}

async function connectCln(config: Config, logger: Logger, common: Common, closing: (() => unknown)[]): Promise<ProviderConnection<ClnClient> | null> {
  const settings = config.providers.cln;
  if (!settings) return null;
  const log = logger.child({ component: "cln" });
  let url: string;
  if (settings.mode === "live") {
    url = settings.url;
  } else {
    const { createClnSandbox } = await import("../sandbox/cln/app.js");
    const sandbox = await createClnSandbox({ statePath: resolve(config.dataDir, "cln-sandbox-state.json"), logger: log.child({ component: "cln-sandbox" }) }).listen(0, "127.0.0.1");
    closing.push(() => sandbox.close());
    url = sandbox.url;
    leavePointer(config, "cln", url, closing);
  }
  // The token's timestamp is the system's, whatever clock the jobs run on: CLN checks it against its own.
  const client = createClnClient({ baseUrl: url, login: settings.login, secretKey: settings.secretKey, ...common, logger: log });
  closing.push(() => client.close());
  return { client, url };
}

function leavePointer(config: Config, provider: "manage2" | "cln", url: string, closing: (() => unknown)[]): void {
  closing.push(leaveSandboxPointer(sandboxPointerOf(config, provider), { url }));
}
