import { LOCKS, type Tx } from "./database.js";

/**
 * The counters of migration 008 on PostgreSQL. Triggers append each change of a job's state or a
 * service's status to a log (job_count_changes, service_count_changes) in the writing
 * transaction, so no two writers share a row; a count is the counter plus the log's rows. A
 * fold moves the log into the counters, keeping it short, so a count reads a few rows however
 * many jobs and services there are.
 */

/**
 * Folds the logs into the counters, inside the caller's transaction, unless another fold is
 * under way (it does the same work; waiting for it would only hold this reader up). The move is
 * one statement per log: its rows are deleted and their sum added in the same commit, so a crash
 * leaves either both or neither. Losing that commit in a crash loses nothing (the log rows come
 * back with it), so it does not wait for the WAL to be flushed.
 */
export async function foldTallies(t: Pick<Tx, "q">): Promise<void> {
  const [lock] = await t.q<{ got: boolean }>("SELECT pg_try_advisory_xact_lock($1, 0) AS got", [LOCKS.tallies]);
  if (!lock?.got) return;
  await t.q("SELECT set_config('synchronous_commit', 'off', true)");
  await t.q(
    `WITH moved AS (DELETE FROM job_count_changes RETURNING state, kind, n)
     INSERT INTO job_counts (state, kind, n) SELECT state, kind, SUM(n) FROM moved GROUP BY state, kind ORDER BY state, kind
     ON CONFLICT (state, kind) DO UPDATE SET n = job_counts.n + excluded.n`,
  );
  await t.q(
    `WITH moved AS (DELETE FROM service_count_changes RETURNING status, n)
     INSERT INTO service_counts (status, n) SELECT status, SUM(n) FROM moved GROUP BY status ORDER BY status
     ON CONFLICT (status) DO UPDATE SET n = service_counts.n + excluded.n`,
  );
}
