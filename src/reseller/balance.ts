import { systemClock, type Clock } from "../clock.js";
import type { Config } from "../config/load.js";
import { silentLogger, type Logger } from "../log/logger.js";
import { DEFAULT_SANDBOX_TOKENS, type RunningSandbox } from "../sandbox/app.js";
import { MAIN_RESELLER_ID } from "../sandbox/state.js";
import { resellerEndpoints } from "./connect.js";
import { ResellerError } from "./errors.js";
import type { UpstreamObserver } from "./transport.js";
import { createV1Client, type V1Client } from "./v1.js";

/**
 * The reseller balance of the bridge's own account, for /metrics and the admin API.
 *
 * reseller-api.md has no call for a reseller's own balance: only the admin endpoint
 * `GET /admin/reseller/{id}/balance`, which needs a token with the admin role and the account
 * id. So the bridge is told its account once (RESELLER_ACCOUNT_ID) and reads it with
 * RESELLER_ADMIN_TOKEN (default RESELLER_API_TOKEN). In sandbox mode both are known: the
 * embedded sandbox's main reseller and its admin token.
 *
 * A reading is kept for a while (60 s) so scrapes and admin calls do not each ask the reseller,
 * concurrent asks share one call, and nothing here throws: what cannot be read is a reading
 * with `balance: null` and the reason.
 */

/** How long a reading (a balance or a failure) is reused before the reseller is asked again. */
export const BALANCE_TTL_MS = 60_000;

/** How long a scrape of /metrics waits for a reading under way before it answers without it. */
export const SCRAPE_WAIT_MS = 2_000;

export interface BalanceReading {
  /** The balance as the reseller last answered it; null when that is unknown (see `reason`). */
  balance: number | null;
  /** When the reseller was last asked (epoch ms), whatever it answered; null when it was not asked. */
  checkedAt: number | null;
  /** Why `balance` is null; null when it is not. */
  reason: string | null;
}

export interface BalanceReader {
  /**
   * The latest reading, asking the reseller first when it is older than the TTL (or `fresh`).
   * `waitMs` bounds how long to wait for that answer (a scrape must not hang on a slow reseller):
   * past it, the reading before, and the answer lands in the cache when it comes. Never throws.
   */
  read(options?: { fresh?: boolean; waitMs?: number }): Promise<BalanceReading>;
}

export interface OwnBalance extends BalanceReader {
  /** A reloaded configuration (SIGHUP): a changed RESELLER_ACCOUNT_ID or RESELLER_ADMIN_TOKEN applies to the next read. */
  configure(config: Config): void;
  /** Closes the admin client's connections. */
  close(): Promise<void>;
}

export const NO_ACCOUNT_ID =
  "RESELLER_ACCOUNT_ID is not set: the reseller API has no call for one's own balance, so the bridge reads it by account id (with RESELLER_ADMIN_TOKEN, a token with the admin role)";

/** The bridge's own account: the embedded sandbox's main reseller in sandbox mode, else RESELLER_ACCOUNT_ID. */
export function ownAccountId(config: Config): string | undefined {
  return config.upstream.mode === "sandbox" ? String(MAIN_RESELLER_ID) : config.RESELLER_ACCOUNT_ID;
}

/** Why a read failed, in words that say what to fix. */
export function balanceFailureReason(err: unknown, accountId: string): string {
  if (!(err instanceof ResellerError)) return `could not read the balance: ${err instanceof Error ? err.message : String(err)}`;
  const said = err.upstreamMessage ? ` ("${err.upstreamMessage}")` : "";
  switch (err.kind) {
    case "forbidden":
      return `the token lacks the admin role: the reseller refused /admin/reseller/${accountId}/balance (HTTP ${err.status ?? 403})${said}; set RESELLER_ADMIN_TOKEN to a token with the admin role`;
    case "unauthorized":
      // The spec does not say how a non-admin token is refused on admin endpoints: it may be this.
      return `the reseller rejected the token (HTTP ${err.status ?? 401})${said}: RESELLER_ADMIN_TOKEN (default RESELLER_API_TOKEN) is wrong, or lacks the admin role`;
    case "not_found":
      return `the reseller knows no account ${accountId} (HTTP ${err.status ?? 404})${said}: check RESELLER_ACCOUNT_ID`;
    case "unavailable":
      return `the reseller is unreachable: ${err.message}${said}`;
    default:
      return `the reseller's answer could not be used: ${err.message}${said}`;
  }
}

export interface BalanceReaderOptions {
  /** A v1 client with an admin-role token; null: no read is possible, `unavailable` says why. */
  client: Pick<V1Client, "resellerBalance"> | null;
  accountId: string | undefined;
  /** The reason when there is no client or account id. (Default: NO_ACCOUNT_ID) */
  unavailable?: string;
  clock?: Clock;
  /** (Default: BALANCE_TTL_MS) */
  ttlMs?: number;
  /** A reading that turns unknown is logged once at warn, its return at info. */
  logger?: Logger;
}

/** Reads the balance of `accountId` through `client`, with the cache and the reasons described above. */
export function createBalanceReader(o: BalanceReaderOptions): BalanceReader {
  const clock = o.clock ?? systemClock;
  const ttlMs = o.ttlMs ?? BALANCE_TTL_MS;
  const logger = o.logger ?? silentLogger();
  const { client, accountId } = o;
  let last: BalanceReading = { balance: null, checkedAt: null, reason: o.unavailable ?? NO_ACCOUNT_ID };
  let inflight: Promise<BalanceReading> | undefined;

  const settle = (next: BalanceReading): BalanceReading => {
    if (next.reason !== null && next.reason !== last.reason) logger.warn({ reason: next.reason }, "reseller balance unknown");
    else if (next.reason === null && last.reason !== null && last.checkedAt !== null) logger.info({ balance: next.balance }, "reseller balance readable again");
    last = next;
    return next;
  };

  const ask = async (c: Pick<V1Client, "resellerBalance">, id: string): Promise<BalanceReading> => {
    const checkedAt = clock.now();
    try {
      const answer = await c.resellerBalance(id);
      if (answer.balance === undefined || !Number.isFinite(answer.balance)) {
        return settle({ balance: null, checkedAt, reason: "the reseller answered without a balance (none under balance or new_balance, at the top, under data or one level inside it)" });
      }
      return settle({ balance: answer.balance, checkedAt, reason: null });
    } catch (err) {
      return settle({ balance: null, checkedAt, reason: balanceFailureReason(err, id) });
    }
  };

  return {
    async read(options = {}) {
      if (!client || accountId === undefined) return last;
      const stale = last.checkedAt === null || clock.now() - last.checkedAt >= ttlMs;
      if (!stale && !options.fresh) return last;
      const pending = (inflight ??= ask(client, accountId).finally(() => {
        inflight = undefined;
      }));
      if (options.waitMs === undefined) return pending;
      let timer: NodeJS.Timeout | undefined;
      const giveUp = new Promise<BalanceReading>((resolve) => {
        timer = setTimeout(() => resolve(last), options.waitMs);
        timer.unref();
      });
      try {
        return await Promise.race([pending, giveUp]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

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
  const url = config.upstream.mode === "live" ? config.upstream.apiUrl : o.sandbox?.apiUrl;
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
      const unavailable = url === undefined ? "sandbox mode, and no sandbox runs in this process" : NO_ACCOUNT_ID;
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
