import type { Clock } from "../clock.js";
import type { Config } from "../config/load.js";
import type { Logger } from "../log/logger.js";
import { createBalanceReader, NO_ACCOUNT_ID, ownAccountId, type BalanceReader, type OwnBalance } from "../reseller/balance.js";
import type { UpstreamObserver } from "../reseller/transport.js";
import { createV1Client, type V1Client } from "../reseller/v1.js";
import { DEFAULT_SANDBOX_TOKENS } from "../vocabulary/sandbox-identity.js";
import { NO_RESELLER } from "./no-reseller.js";
import { resellerEndpoints } from "./reseller-connection.js";
import type { RunningSandbox } from "../sandbox/app.js";

export interface OwnBalanceOptions {
  /** The in-process sandbox, in sandbox mode (ResellerClients.sandbox). */
  sandbox: RunningSandbox | null;
  clock?: Clock;
  logger: Logger;
  /** Counts and logs the balance calls with the others (observeUpstream). */
  observer?: UpstreamObserver;
  ttlMs?: number;
}

/**
 * The service's reader of its own balance: an admin-token v1 client of its own (the service's
 * clients carry the reseller token) at the configured reseller, or at the embedded sandbox.
 */
export function ownBalance(config: Config, o: OwnBalanceOptions): OwnBalance {
  const url = config.upstream.mode === "live" ? config.upstream.apiUrl : config.upstream.mode === "sandbox" ? o.sandbox?.apiUrl : undefined;
  const logger = o.logger.child({ component: "balance" });
  /** Every client not closed yet: the current one, and replaced ones finishing a call. */
  const open = new Set<V1Client>();
  let current: { client: V1Client; call: Promise<unknown> } | null = null;
  let key: string | undefined;
  let reader: BalanceReader = createBalanceReader({ client: null, accountId: undefined });

  const configure = (cfg: Config): void => {
    // Live or sandbox is a restart's business (RESELLER_API_URL): until then, the running one.
    if (cfg.upstream.mode !== config.upstream.mode) return;
    const accountId = ownAccountId(cfg);
    const token = config.upstream.mode === "live" ? resellerEndpoints(cfg, "admin").v1.token : DEFAULT_SANDBOX_TOKENS.admin;
    const next = JSON.stringify([accountId, token]);
    if (next === key) return;
    key = next;
    if (current) {
      // Replaced: its connections close once a read under way on it has ended.
      const { client, call } = current;
      void call
        .then(async () => {
          open.delete(client);
          await client.close();
        })
        .catch(() => undefined);
    }
    current = null;
    if (url === undefined || accountId === undefined) {
      const unavailable =
        config.upstream.mode === "none" ? `there is no balance to read: ${NO_RESELLER}` : url === undefined ? "sandbox mode, and no sandbox runs in this process" : NO_ACCOUNT_ID;
      reader = createBalanceReader({ client: null, accountId, unavailable });
      return;
    }
    let client: V1Client;
    try {
      // RESELLER_TIMEOUT_MS as the service runs with it: a restart changes it, not a reload.
      client = createV1Client({ baseUrl: url, token, timeoutMs: config.RESELLER_TIMEOUT_MS, logger, observer: o.observer });
    } catch (err) {
      reader = createBalanceReader({ client: null, accountId, unavailable: `no client for the reseller's admin endpoint: ${(err as Error).message}` });
      return;
    }
    open.add(client);
    const mine = { client, call: Promise.resolve() as Promise<unknown> };
    current = mine;
    const tracked = {
      resellerBalance: (id: string | number) => {
        const answer = client.resellerBalance(id);
        mine.call = answer.catch(() => undefined);
        return answer;
      },
    };
    reader = createBalanceReader({ client: tracked, accountId, clock: o.clock, ttlMs: o.ttlMs, logger });
  };
  configure(config);

  return {
    read: (options) => reader.read(options),
    configure,
    async close() {
      // A read under way fails where it got to, and answers a reading saying so.
      const clients = [...open];
      open.clear();
      await Promise.all(clients.map((c) => c.close()));
    },
  };
}
