import { systemClock, type Clock } from "../clock.js";
import type { Config } from "../config/load.js";
import { silentLogger, type Logger } from "../log/logger.js";
import { ResellerError } from "./errors.js";
import { type V1Client } from "./v1.js";
import { MAIN_RESELLER_ID } from "../vocabulary/sandbox-identity.js";

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
