import { LOCKS, type PgDb, type Tx } from "./database.js";

/**
 * The counters of migration 008 on PostgreSQL (the services' per status and provider since 016).
 * Triggers append each change of a job's state or a service's status or provider to a log
 * (job_count_changes, service_count_changes) in the writing transaction, so no two writers
 * share a row; a count is the counter plus the log's rows. A
 * fold moves the log into the counters, keeping it short, so a count reads a few rows however
 * many jobs and services there are.
 */

/**
 * Folds the logs into the counters, inside the caller's transaction, unless another fold is
 * under way (it does the same work; waiting for it would only hold this one up). The move is
 * one statement: each log's rows are deleted and their sum added in the same commit, so a crash
 * leaves either both or neither. Losing that commit in a crash loses nothing (the log rows come
 * back with it), so it does not wait for the WAL to be flushed.
 */
export async function foldTallies(t: Pick<Tx, "q">): Promise<void> {
  const [lock] = await t.q<{ got: boolean }>("SELECT pg_try_advisory_xact_lock($1, 0) AS got, set_config('synchronous_commit', 'off', true)", [LOCKS.tallies]);
  if (!lock?.got) return;
  await t.q(
    `WITH jobs_moved AS (DELETE FROM job_count_changes RETURNING state, kind, n),
       jobs_added AS (
         INSERT INTO job_counts (state, kind, n) SELECT state, kind, SUM(n) FROM jobs_moved GROUP BY state, kind ORDER BY state, kind
         ON CONFLICT (state, kind) DO UPDATE SET n = job_counts.n + excluded.n),
       services_moved AS (DELETE FROM service_count_changes RETURNING status, provider, n),
       services_added AS (
         INSERT INTO service_counts (status, provider, n) SELECT status, provider, SUM(n) FROM services_moved GROUP BY status, provider ORDER BY status, provider
         ON CONFLICT (status, provider) DO UPDATE SET n = service_counts.n + excluded.n)
     SELECT 1`,
  );
}

/** How long after a fold a read starts the next one, at most. */
export const FOLD_EVERY_MS = 1_000;

/**
 * The fold, off the readers' path. A read of the counters is the counters plus the log in one
 * statement, exact whether or not a fold ran (a fold moves rows from the log to the counters in
 * one commit, and a statement reads one snapshot), so it need not fold first: it calls `due()`
 * once it has its rows, which starts a fold in the background when none ran for FOLD_EVERY_MS.
 * The log then holds about a second of changes while anything reads, about as short as when
 * every read folded first, and a read is one statement with no transaction around it.
 */
export function tallyFolds(db: PgDb, everyMs = FOLD_EVERY_MS) {
  let last = -Infinity;
  let running: Promise<void> | undefined;
  let closed = false;
  return {
    due(): void {
      const now = performance.now();
      if (closed || running || now - last < everyMs) return;
      last = now;
      running = db
        .tx((t) => foldTallies(t))
        // The log keeps its rows, and every count stays exact; a later read tries again.
        .catch((err: unknown) => db.logger.warn({ err }, "could not fold the counters' change log"))
        .finally(() => (running = undefined));
    },
    /** Waits for the fold under way, if any; none starts after. */
    async close(): Promise<void> {
      closed = true;
      await running;
    },
  };
}

export type TallyFolds = ReturnType<typeof tallyFolds>;
