import pg from "pg";
import type { Clock } from "../../clock.js";
import type { Logger } from "../../log/logger.js";
import { StoreUnavailableError } from "../unavailable.js";

/**
 * The database's "now" in Unix milliseconds. clock_timestamp(), not now(): a transaction that
 * waited for a lock must not lease or reclaim with the time it started at.
 */
export const DB_NOW_MS = "floor(extract(epoch from clock_timestamp()) * 1000)::bigint";

/**
 * SQL for "now" from parameter `$i`: the injected clock's time when the store has one, else
 * (the parameter is null) the database's clock. Single statements use it to stay one round trip.
 */
export const nowSql = (i: number) => `COALESCE($${i}::bigint, ${DB_NOW_MS})`;

/** BIGINT (times in ms, ids, counts) as a JavaScript number: every value here stays far below 2^53. */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === pg.types.builtins.INT8 && format !== "binary" ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig["getTypeParser"],
};

/**
 * Advisory-lock namespaces (the first key of the two-int4 form), one per kind of thing an
 * operation serializes on. A transaction takes all its locks at once, sorted by (namespace, key),
 * before it touches a row, so two transactions never wait for each other in a cycle.
 */
export const LOCKS = {
  /** A delivery's (source, webhook id): the same delivery is judged once. */
  webhook: 0x4c420001,
  /** A service's row: its view (row, queue) is read and written by one intake at a time. */
  service: 0x4c420002,
  /** An IP: "one licence, one service" judged by one intake at a time. */
  ip: 0x4c420003,
  /** An operator alert: its episode opens once. */
  alert: 0x4c420004,
  /**
   * A bucket of job queues (hash of the queue key, 256 buckets): held from before a job's id is
   * drawn until commit, so within a queue id order is commit order on every instance. Buckets,
   * not one lock per queue: the renewal sweep enqueues thousands of jobs in one transaction, more
   * than PostgreSQL's lock table holds (max_locks_per_transaction); two queues sharing a bucket
   * only wait for each other's commit.
   */
  queue: 0x4c420005,
  /** Claims hold it shared, the operator's retry exclusively (src/store/postgres/jobs.ts). */
  claims: 0x4c420006,
  /** The fold of the counters' change log (src/store/postgres/tallies.ts): one at a time, the others skip it. */
  tallies: 0x4c420007,
} as const;

const QUEUE_BUCKETS_MASK = 255;

export interface LockKey {
  ns: number;
  key: string;
}

export const queueLock = (queueKey: string): LockKey => ({ ns: LOCKS.queue, key: queueKey });

/** Queries of one transaction. */
export interface Tx {
  q<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>;
  /** Rows changed. */
  run(text: string, values?: unknown[]): Promise<number>;
  /** The time of this transaction, read once (from the clock, or the database after the locks taken so far). */
  now(): Promise<number>;
  /** Takes these transaction-scoped advisory locks (sorted; the ones already held cost nothing). */
  lock(keys: readonly LockKey[]): Promise<void>;
  /** Runs once the transaction has committed (wake-ups: another connection must see the rows). */
  afterCommit(fn: () => void): void;
}

/** What a transaction returns to be rolled back instead of committed (with its value). */
export class Rollback<T> {
  constructor(readonly value: T) {}
}

export interface PgDb {
  readonly pool: pg.Pool;
  readonly logger: Logger;
  /** The injected clock's time, or null: use the database's clock (see `nowSql`). */
  clockParam(): number | null;
  q<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>;
  /**
   * `q`, with the statement kept prepared under `name` on each connection, so that it is planned
   * once per connection rather than on every call: for a hot read whose planning costs more than
   * running it. Only for a statement that names its columns: a prepared `SELECT *` fails once a
   * migration adds a column ("cached plan must not change result type").
   */
  prepared<R = Record<string, unknown>>(name: string, text: string, values?: unknown[]): Promise<R[]>;
  run(text: string, values?: unknown[]): Promise<number>;
  /**
   * Runs `fn` in one READ COMMITTED transaction on one pooled connection. A deadlock (which the
   * lock order above should prevent) or a serialization failure runs it again from the start,
   * up to three times: every `fn` here only reads, writes and calls pure functions.
   */
  tx<T>(fn: (t: Tx) => Promise<T | Rollback<T>>): Promise<T>;
  /** Ends the pool and resolves once every connection's socket has closed (pool.end() alone does not wait). */
  end(): Promise<void>;
}

export interface OpenPoolOptions {
  clock: Clock | "database";
  logger: Logger;
  /** Connections in the pool. (Default: 10) */
  poolSize?: number;
}

/**
 * PostgreSQL's text cannot hold U+0000 (SQLite's can): a NUL in an upstream error message or a
 * detail would make the write fail, and a job's ending could never be recorded. It is stored as
 * U+FFFD, the character for "could not be represented".
 */
function storable(values: unknown[] | undefined): unknown[] | undefined {
  if (!values) return values;
  const clean = (v: unknown): unknown => (typeof v === "string" && v.includes("\u0000") ? v.replaceAll("\u0000", "\uFFFD") : v);
  return values.map((v) => (Array.isArray(v) ? v.map(clean) : clean(v)));
}

/**
 * SQLSTATEs that say the database itself is gone, PostgreSQL's side of SQLite's lost file: an
 * operation meeting one is answered as StoreUnavailableError (503 with Retry-After), not a 500.
 * - 3D000 invalid_catalog_name: no such database (every connection opened after a DROP DATABASE).
 * - 57P04 database_dropped: the session's database was dropped under it.
 * (A server that is down, restarting or cut off is `isPostgresBusy`: also a 503.)
 */
const GONE_STATES = new Set(["3D000", "57P04"]);

/** `err`, or the store's refusal when it says the database is gone. */
function goneOr(err: unknown): unknown {
  return GONE_STATES.has(sqlState(err) ?? "") ? new StoreUnavailableError((err as Error).message, { cause: err }) : err;
}
const rethrow = (err: unknown): never => {
  throw goneOr(err);
};

/** Errors that roll a transaction back without anything being wrong with it: run it again. */
const RERUN = new Set(["40001", "40P01"]);

export function openPool(url: string, options: OpenPoolOptions): PgDb {
  const { logger } = options;
  const clock = options.clock === "database" ? undefined : options.clock;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    types,
    application_name: "license-bridge",
    // A request must not wait forever for a connection; the caller answers "busy" instead.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
  });
  // An idle connection that breaks (a server restart, a failover) is reported here; without a
  // listener the error would end the process. The pool replaces it on the next checkout.
  pool.on("error", (err) => logger.warn({ err }, "PostgreSQL connection lost while idle"));
  // Connections open, counted until their sockets have closed ('remove' comes after that).
  let open = 0;
  let allClosed: (() => void) | undefined;
  pool.on("connect", () => open++);
  pool.on("remove", () => {
    if (--open === 0) allClosed?.();
  });

  const clockParam = () => (clock ? clock.now() : null);

  const tx = async <T>(fn: (t: Tx) => Promise<T | Rollback<T>>): Promise<T> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await txOnce(fn);
      } catch (err) {
        if (attempt < 3 && RERUN.has(sqlState(err) ?? "")) continue;
        throw goneOr(err);
      }
    }
  };

  const txOnce = async <T>(fn: (t: Tx) => Promise<T | Rollback<T>>): Promise<T> => {
    const client = await pool.connect();
    let broken: Error | undefined;
    // A checked-out client has no listener of the pool's: an error between two queries (the
    // server went away) would otherwise end the process. The next query fails and says so.
    const onError = (err: Error) => (broken = err);
    client.on("error", onError);
    const held = new Set<string>();
    const after: (() => void)[] = [];
    let now: number | undefined;
    const t: Tx = {
      q: async <R>(text: string, values?: unknown[]) => (await client.query(text, storable(values))).rows as R[],
      run: async (text, values) => (await client.query(text, storable(values))).rowCount ?? 0,
      now: async () => {
        if (now === undefined) now = clock ? clock.now() : (await client.query<{ now: number }>(`SELECT ${DB_NOW_MS} AS now`)).rows[0]!.now;
        return now;
      },
      lock: async (keys) => {
        const wanted = keys.filter((k) => !held.has(`${k.ns}:${k.key}`));
        if (wanted.length === 0) return;
        // The subquery's ORDER BY is the order the aggregate takes the locks in.
        await client.query(
          `SELECT count(pg_advisory_xact_lock(ns, k)) FROM (
             SELECT DISTINCT ns, CASE WHEN ns = $3 THEN hashtext(key) & ${QUEUE_BUCKETS_MASK} ELSE hashtext(key) END AS k
             FROM unnest($1::int[], $2::text[]) AS l(ns, key) ORDER BY ns, k) sorted`,
          storable([wanted.map((k) => k.ns), wanted.map((k) => k.key), LOCKS.queue]),
        );
        for (const k of wanted) held.add(`${k.ns}:${k.key}`);
      },
      afterCommit: (f) => after.push(f),
    };
    try {
      await client.query("BEGIN");
      const out = await fn(t);
      if (out instanceof Rollback) {
        await client.query("ROLLBACK");
        return out.value;
      }
      // With synchronous_commit on (the default), COMMIT returns once the WAL is flushed.
      await client.query("COMMIT");
      for (const f of after) {
        try {
          f();
        } catch (err) {
          logger.warn({ err }, "a listener of a committed transaction threw");
        }
      }
      return out;
    } catch (err) {
      try {
        await client.query("ROLLBACK");
      } catch (rollbackErr) {
        broken = rollbackErr as Error;
      }
      throw err;
    } finally {
      // A connection whose ROLLBACK failed is in an unknown state: the pool drops it.
      client.removeListener("error", onError);
      client.release(broken);
    }
  };

  return {
    pool,
    logger,
    clockParam,
    q: async <R>(text: string, values?: unknown[]) => (await pool.query(text, storable(values)).catch(rethrow)).rows as R[],
    prepared: async <R>(name: string, text: string, values?: unknown[]) => (await pool.query({ name, text, values: storable(values) }).catch(rethrow)).rows as R[],
    run: async (text, values) => (await pool.query(text, storable(values)).catch(rethrow)).rowCount ?? 0,
    tx,
    async end() {
      const closed = open === 0 ? Promise.resolve() : new Promise<void>((resolve) => (allClosed = resolve));
      await pool.end();
      await closed;
    },
  };
}

export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * SQLSTATEs worth another try soon, each for a reason:
 * - 40001 serialization failure, 40P01 deadlock: the transaction was chosen to give way.
 * - 55P03 lock not available: a lock_timeout ran out (another session holds the lock).
 * - 57014 query canceled: a statement_timeout ran out, usually waiting for a lock.
 * - 57P01/57P02/57P03: the server is shutting down, crashed, or still starting (failover).
 * - 53300 too many connections: others hold every slot for now.
 * - class 08: the connection failed or broke.
 */
const BUSY_STATES = new Set(["40001", "40P01", "55P03", "57014", "57P01", "57P02", "57P03", "53300"]);
/** Socket errors on the way to the server: down, restarting, or moved (DNS during a failover). */
const BUSY_ERRNOS = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN"]);

export function isPostgresBusy(err: unknown): boolean {
  const state = sqlState(err);
  if (state) return BUSY_STATES.has(state) || state.startsWith("08");
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && BUSY_ERRNOS.has(code)) return true;
  const message = err instanceof Error ? err.message : "";
  // node-postgres's own words for a connection that broke or could not be had in time.
  return /^Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(message);
}
