import { JOB_PRIORITIES, JOB_PRIORITY, type Job, type JobState } from "../../vocabulary/jobs.js";
import { jobsByState, toJob, type JobRow } from "../job-row.js";
import { cancelRecord, cancelRefusalText, whyNotCancellable } from "../cancel-rules.js";
import type { JobFilter, JobOps, QueueState } from "../ports/jobs.js";
import type { NewJob, ServiceChange } from "../ports/writes.js";
import type { ServiceRow } from "../service-row.js";
import type { StoreGauges } from "../ports/store.js";
import { LOCKS, nowSql, queueLock, type PgDb, type Tx } from "./database.js";
import type { QueueRead } from "../listing-reads.js";
import type { PgListings } from "./listings.js";
import type { TallyFolds } from "./tallies.js";
import type { PgAudit } from "./audit.js";

/**
 * Whether a queued job may start now: due, and no job of its queue is running, and no earlier
 * one is queued or blocked (blocked holds its successors: later events of a service wait for the
 * operator too). A running job of the queue holds every other, earlier ones too: an operator's
 * retry of an old failed job waits for the job that runs.
 */
const runnable = (now: string) => `j.state = 'queued' AND j.run_at <= ${now}
  AND (j.queue_key IS NULL OR NOT EXISTS (
    SELECT 1 FROM jobs p
    WHERE p.queue_key = j.queue_key AND p.id <> j.id
      AND (p.state = 'running' OR (p.id < j.id AND p.state IN ('queued', 'blocked')))))`;
const RUNNABLE = runnable("$1");

/** Jobs by state and kind: the counters plus their change log, in one snapshot (src/store/postgres/tallies.ts). */
const JOB_COUNTS = `SELECT state, kind, SUM(n)::bigint AS n FROM (
    SELECT state, kind, n FROM job_counts UNION ALL SELECT state, kind, n FROM job_count_changes) c
  GROUP BY state, kind`;

/**
 * The queue in one statement: the time (the clock's, $1, or the database's), when the due job
 * that has waited longest was due (the first of each priority's range of jobs_runnable that could
 * start now), and the jobs by state and kind, a row each (one row of NULLs when there are none).
 * `also`: more columns read in the same round trip.
 */
const queueSql = (also = "") => `SELECT clock.now, oldest.run_at AS oldest_due_at, c.state, c.kind, c.n${also}
  FROM (SELECT ${nowSql(1)} AS now) clock
  CROSS JOIN LATERAL (SELECT MIN(run_at) AS run_at FROM (${JOB_PRIORITIES.map(
    (priority) => `(SELECT j.run_at FROM jobs j WHERE ${runnable("clock.now")} AND j.priority = ${Number(priority)} ORDER BY j.run_at, j.id LIMIT 1)`,
  ).join(" UNION ALL ")}) due) oldest
  LEFT JOIN (${JOB_COUNTS}) c ON true`;

const QUEUE = queueSql();
/** What /metrics reads of the database: the queue and, riding along, the open alert episodes. */
const GAUGES = queueSql(", (SELECT COUNT(*) FROM alerts WHERE closed_at IS NULL)::int AS open_alerts");

interface QueueRow {
  now: number;
  oldest_due_at: number | null;
  state: JobState | null;
  kind: string | null;
  n: number | null;
}

/** Jobs by state (every state, 0 when none) and the queue, from a queueSql statement's rows. */
function queueFrom(rows: QueueRow[]): { byState: Record<JobState, number>; queue: QueueState } {
  const byState = jobsByState(rows);
  const queued: Record<string, number> = {};
  for (const r of rows) if (r.state === "queued" && r.n !== 0) queued[r.kind!] = r.n!;
  const { now, oldest_due_at: oldestDueAt } = rows[0]!;
  return { byState, queue: { queued, oldestDueAt, oldestDueAgeMs: oldestDueAt === null ? 0 : Math.max(0, now - oldestDueAt) } };
}

/** What a stopped job's record needs of the services, inside the transaction that records the stop. */
export interface PgStopTarget {
  getForUpdate(t: Tx, serviceId: string): Promise<ServiceRow | undefined>;
  changeIn(t: Tx, change: ServiceChange): Promise<unknown>;
}

/**
 * The durable job queue on PostgreSQL, for any number of instances on one database.
 *
 * Claims lock the rows they take (FOR UPDATE SKIP LOCKED), so two instances never lease one job
 * and never wait for each other. Per-queue order rests on two rules:
 * - within a queue, id order is commit order: a job's id is drawn under its queue's lock (a
 *   bucket of queues, LOCKS.queue) held until commit, so a claim that sees a job also sees every
 *   earlier job of its queue (with sequence ids drawn freely, a later job could commit first,
 *   start, and then an earlier one appear beside it);
 * - a claim reads a queue's jobs in one snapshot and only ever starts its first unfinished job;
 *   a job that a concurrent claim took is locked and skipped, and once committed it is running,
 *   which holds the rest of its queue. The only move that could make an earlier job runnable
 *   behind a claim's back is the operator's retry of a failed job: it waits for running claims
 *   (LOCKS.claims, exclusive against the claims' shared hold) and claims after it see it.
 */
export function pgJobs(db: PgDb, wake: () => void, defaultMaxAttempts: number, services: () => PgStopTarget, listings: PgListings, audit: PgAudit, folds: TallyFolds) {
  /**
   * Inserts jobs inside the caller's transaction and returns, in order, each one's id and
   * whether it was created (a unique key already taken returns the existing job's id).
   */
  const insert = async (t: Tx, jobs: readonly NewJob[]): Promise<{ id: number; created: boolean }[]> => {
    if (jobs.length === 0) return [];
    const out: ({ id: number; created: boolean } | undefined)[] = jobs.map(() => undefined);
    // Keys already used need neither a lock nor an id (a sweep finds most of its terms queued).
    const keys = [...new Set(jobs.flatMap((j) => (j.uniqueKey ? [j.uniqueKey] : [])))];
    const existing = new Map<string, number>();
    const lookUp = async (wanted: string[]) => {
      if (wanted.length === 0) return;
      for (const r of await t.q<{ id: number; unique_key: string }>("SELECT id, unique_key FROM jobs WHERE unique_key = ANY($1::text[])", [wanted])) {
        existing.set(r.unique_key, r.id);
      }
    };
    await lookUp(keys);
    const fresh: number[] = [];
    jobs.forEach((j, i) => {
      const id = j.uniqueKey ? existing.get(j.uniqueKey) : undefined;
      if (id !== undefined) out[i] = { id, created: false };
      else fresh.push(i);
    });
    if (fresh.length > 0) {
      await t.lock(fresh.flatMap((i) => (jobs[i]!.queueKey ? [queueLock(jobs[i]!.queueKey!)] : [])));
      const now = await t.now();
      // Ids drawn now, under the queue locks, in the order the jobs were given.
      const ids = (
        await t.q<{ id: number }>("SELECT nextval(pg_get_serial_sequence('jobs', 'id')) AS id FROM generate_series(1, $1::int) ORDER BY id", [fresh.length])
      ).map((r) => r.id);
      const rows = fresh.map((i) => jobs[i]!);
      const inserted = new Set(
        (
          await t.q<{ id: number }>(
            `INSERT INTO jobs (id, kind, queue_key, service_id, event_id, unique_key, payload, state, max_attempts, priority, run_at, created_at, updated_at)
             SELECT id, kind, queue_key, service_id, event_id, unique_key, payload, 'queued', max_attempts, priority, $10::bigint + delay_ms, $10, $10
             FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int[], $9::bigint[], $11::int[])
               AS n(id, kind, queue_key, service_id, event_id, unique_key, payload, max_attempts, delay_ms, priority)
             ON CONFLICT (unique_key) DO NOTHING
             RETURNING id`,
            [
              ids,
              rows.map((j) => j.kind),
              rows.map((j) => j.queueKey ?? null),
              rows.map((j) => j.serviceId ?? null),
              rows.map((j) => j.eventId ?? null),
              rows.map((j) => j.uniqueKey ?? null),
              rows.map((j) => JSON.stringify(j.payload ?? {})),
              rows.map((j) => j.maxAttempts ?? defaultMaxAttempts),
              rows.map((j) => j.delayMs ?? 0),
              now,
              rows.map((j) => j.priority ?? JOB_PRIORITY.normal),
            ],
          )
        ).map((r) => r.id),
      );
      // A key taken meanwhile by another transaction (its insert committed while ours waited),
      // or twice in this batch (the first one wins, as one enqueue after another would).
      await lookUp(fresh.flatMap((i, n) => (inserted.has(ids[n]!) ? [] : [jobs[i]!.uniqueKey!])));
      let dueNow = false;
      fresh.forEach((i, n) => {
        if (inserted.has(ids[n]!)) {
          out[i] = { id: ids[n]!, created: true };
          if (!jobs[i]!.delayMs || jobs[i]!.delayMs! <= 0) dueNow = true;
        } else {
          out[i] = { id: existing.get(jobs[i]!.uniqueKey!)!, created: false };
        }
      });
      if (dueNow) t.afterCommit(wake);
    }
    return out as { id: number; created: boolean }[];
  };

  /**
   * A queueSql statement on the pool: one round trip; the counters' log is folded after, off this
   * read's path. Prepared: its plan (the runnable ranges, the counters) takes longer to make than
   * the statement takes to run.
   */
  const readQueue = async <R extends QueueRow>(name: string, sql: string): Promise<R[]> => {
    const rows = await db.prepared<R>(name, sql, [db.clockParam()]);
    folds.due();
    return rows;
  };

  const unfinished = async (t: Pick<Tx, "q">, queueKey: string) =>
    (await t.q<JobRow>("SELECT * FROM jobs WHERE queue_key = $1 AND state IN ('queued', 'running', 'blocked') ORDER BY id", [queueKey])).map(toJob);

  /** One statement that ends an attempt if `worker` still holds the job; true when it did. */
  const end = async (x: Pick<Tx, "run">, sql: string, values: unknown[]) => (await x.run(sql, values)) === 1;

  /** Records how an attempt ended, on `x`: the pool, or a transaction that also records the service. */
  const finishIn = async (
    x: Pick<Tx, "run"> & Partial<Pick<Tx, "afterCommit">>,
    job: { id: number; attempts: number; maxAttempts: number },
    worker: string,
    ending: Parameters<JobOps["finish"]>[2],
  ): Promise<JobState | undefined> => {
    const now = db.clockParam();
    const finishSql = `UPDATE jobs SET state = $3, run_at = ${nowSql(4)} + $5::bigint, last_error = $6, error_code = $7, leased_by = NULL, lease_until = NULL,
         intent = CASE WHEN $3 = 'succeeded' THEN NULL ELSE intent END, updated_at = ${nowSql(4)}
       WHERE id = $1 AND state = 'running' AND leased_by = $2`;
    let state: JobState;
    let done: boolean;
    switch (ending.state) {
      case "succeeded":
        state = "succeeded";
        done = await end(x, finishSql, [job.id, worker, state, now, 0, null, null]);
        if (done && ending.skipped !== undefined) await x.run("UPDATE jobs SET skipped = $2, unique_key = NULL WHERE id = $1", [job.id, ending.skipped]);
        break;
      case "retry":
        // The claim counted this attempt, and nothing else changes attempts while the lease is held.
        state = job.attempts >= job.maxAttempts ? "failed" : "queued";
        done = await end(x, finishSql, [job.id, worker, state, now, state === "failed" ? 0 : ending.delayMs, ending.error, state === "failed" ? ending.code : null]);
        break;
      case "blocked":
      case "failed":
        state = ending.state;
        done = await end(x, finishSql, [job.id, worker, state, now, 0, ending.error, ending.code]);
        break;
      case "deferred":
        state = "queued";
        done = await end(
          x,
          `UPDATE jobs SET state = 'queued', run_at = ${nowSql(3)} + $4::bigint, last_error = $5, attempts = attempts - $6::int,
             leased_by = NULL, lease_until = NULL, updated_at = ${nowSql(3)}
           WHERE id = $1 AND state = 'running' AND leased_by = $2`,
          [job.id, worker, now, ending.delayMs, ending.error, ending.spent ? 0 : 1],
        );
        break;
      case "released":
        state = "queued";
        done = await end(
          x,
          `UPDATE jobs SET state = 'queued', attempts = GREATEST(attempts - 1, 0), run_at = ${nowSql(3)}, leased_by = NULL, lease_until = NULL, updated_at = ${nowSql(3)}
           WHERE id = $1 AND state = 'running' AND leased_by = $2`,
          [job.id, worker, now],
        );
        break;
    }
    // Runnable now: the job itself (released, or due again at once), or the next job of its queue.
    const dueNow = ending.state === "released" || ((ending.state === "retry" || ending.state === "deferred") && ending.delayMs <= 0);
    if (done && (state === "succeeded" || state === "failed" || (state === "queued" && dueNow))) {
      if (x.afterCommit) x.afterCommit(wake);
      else wake();
    }
    return done ? state : undefined;
  };

  const ops: JobOps = {
    async enqueue(job) {
      return (await db.tx((t) => insert(t, [job])))[0]!;
    },

    async claim(worker, limit, leaseMs) {
      if (limit <= 0) return [];
      return db.tx(async (t) => {
        await t.q("SELECT pg_advisory_xact_lock_shared($1, 0)", [LOCKS.claims]);
        const now = await t.now();
        // Expired leases of other workers come back first (never the claimer's own: it knows
        // its jobs still run, and a clock jump must not start a second copy beside the first).
        // SKIP LOCKED: a job another claim is taking back or finishing is left to it.
        await t.q(
          `UPDATE jobs SET state = 'queued', leased_by = NULL, lease_until = NULL, updated_at = $1
           WHERE id IN (SELECT id FROM jobs WHERE state = 'running' AND lease_until < $1 AND leased_by <> $2 FOR UPDATE SKIP LOCKED)`,
          [now, worker],
        );
        // Each priority's due jobs in turn, the most urgent first (one range of jobs_runnable
        // each, as on SQLite), until the limit is reached. Each statement sees the jobs the
        // ones before it started running, so a queue still starts one job at a time.
        const jobs: Job[] = [];
        for (const priority of JOB_PRIORITIES) {
          if (jobs.length >= limit) break;
          const rows = await t.q<JobRow>(
            `WITH picked AS (
               SELECT j.id FROM jobs j WHERE ${RUNNABLE} AND j.priority = $5
               ORDER BY j.run_at, j.id LIMIT $2
               FOR UPDATE OF j SKIP LOCKED)
             UPDATE jobs SET state = 'running', attempts = attempts + 1, leased_by = $3, lease_until = $1::bigint + $4::bigint, updated_at = $1
             FROM picked WHERE jobs.id = picked.id
             RETURNING jobs.*`,
            [now, limit - jobs.length, worker, leaseMs, priority],
          );
          jobs.push(...rows.map(toJob).sort((a, b) => a.runAt - b.runAt || a.id - b.id));
        }
        return jobs;
      });
    },

    async reclaimFrom(isDead) {
      const n = await db.tx(async (t) => {
        const holders = await t.q<{ w: string }>("SELECT DISTINCT leased_by AS w FROM jobs WHERE state = 'running' AND leased_by IS NOT NULL");
        const dead = holders.map((h) => h.w).filter((w) => isDead(w));
        if (dead.length === 0) return 0;
        const now = await t.now();
        return t.run(
          "UPDATE jobs SET state = 'queued', leased_by = NULL, lease_until = NULL, updated_at = $1 WHERE state = 'running' AND leased_by = ANY($2::text[])",
          [now, dead],
        );
      });
      if (n) wake();
      return n;
    },

    async heartbeat(worker, leaseMs) {
      await db.run(`UPDATE jobs SET lease_until = ${nowSql(1)} + $3::bigint WHERE state = 'running' AND leased_by = $2`, [db.clockParam(), worker, leaseMs]);
    },

    // One statement, one commit; with synchronous_commit on (the default) it is on disk when
    // this resolves, whether `durable` asks for it or not.
    async setIntent(id, worker, intent, _durable) {
      const rows = await db.run(`UPDATE jobs SET intent = $3, updated_at = ${nowSql(4)} WHERE id = $1 AND state = 'running' AND leased_by = $2`, [
        id,
        worker,
        intent === null ? null : JSON.stringify(intent),
        db.clockParam(),
      ]);
      return rows === 1;
    },

    async finish(job, worker, ending) {
      const stop = "stop" in ending ? ending.stop : undefined;
      const last = "change" in ending ? ending.change : undefined;
      const serviceId = last?.serviceId ?? (stop ? job.serviceId : null);
      if (!serviceId) {
        // A skip is two statements (the ending, then the reason with the key given up): one commit.
        return "skipped" in ending && ending.skipped !== undefined ? db.tx((t) => finishIn(t, job, worker, ending)) : finishIn(db, job, worker, ending);
      }
      // The job's ending and its service's record (a stop record, or the handler's last change)
      // commit together. The service row is locked first, as intake locks it before it writes
      // jobs, so neither waits on the other in a circle.
      return db.tx(async (t) => {
        const svc = await services().getForUpdate(t, serviceId);
        const state = await finishIn(t, job, worker, ending);
        if (state === "succeeded" && last) await services().changeIn(t, last);
        const change = stop && svc && (state === "failed" || state === "blocked") ? stop(state, svc) : undefined;
        if (change) await services().changeIn(t, { ...change, serviceId });
        return state;
      });
    },

    async requeueBlocked(kind, olderThanMs) {
      // SKIP LOCKED: two instances healing at once take disjoint rows and never deadlock.
      const n = await db.run(
        `UPDATE jobs SET state = 'queued', run_at = ${nowSql(1)}, error_code = NULL, updated_at = ${nowSql(1)}
         WHERE id IN (SELECT id FROM jobs WHERE kind = $2 AND state = 'blocked' AND updated_at <= ${nowSql(1)} - $3::bigint ORDER BY id FOR UPDATE SKIP LOCKED)`,
        [db.clockParam(), kind, olderThanMs],
      );
      if (n) wake();
      return n;
    },

    async retry(id, draft) {
      const row = await db.tx(async (t) => {
        // Waits for the claims under way; the claims after this commit see the job queued.
        await t.q("SELECT pg_advisory_xact_lock($1, 0)", [LOCKS.claims]);
        const now = await t.now();
        const [r] = await t.q<JobRow>(
          `UPDATE jobs SET state = 'queued', attempts = 0, run_at = $2, error_code = NULL, updated_at = $2
           WHERE id = $1 AND state IN ('failed', 'blocked') RETURNING *`,
          [id, now],
        );
        if (r) t.afterCommit(wake);
        // The operator's retry and its audit entry commit together: the entry says whether it happened.
        if (draft && r) await audit.insertIn(t, { ...draft, job_id: id, service_id: r.service_id, outcome: "ok" });
        else if (draft) {
          const [was] = await t.q<Pick<JobRow, "state" | "service_id">>("SELECT state, service_id FROM jobs WHERE id = $1", [id]);
          const why = was ? `the job is ${was.state}; only failed or blocked jobs can be retried` : "no such job";
          await audit.insertIn(t, { ...draft, job_id: id, service_id: was?.service_id ?? null, outcome: "refused", detail: draft.detail ? `${draft.detail}; ${why}` : why });
        }
        return r;
      });
      return row ? toJob(row) : undefined;
    },

    async cancel(id, draft) {
      return db.tx(async (t) => {
        // The job's service first, as every transaction that writes both locks them (intake, a job's ending).
        const [peek] = await t.q<Pick<JobRow, "service_id">>("SELECT service_id FROM jobs WHERE id = $1", [id]);
        const svc = peek?.service_id ? await services().getForUpdate(t, peek.service_id) : undefined;
        const [was] = await t.q<JobRow>("SELECT * FROM jobs WHERE id = $1 FOR UPDATE", [id]);
        const refused = whyNotCancellable(was);
        if (refused) {
          const why = cancelRefusalText(refused, was && toJob(was));
          await audit.insertIn(t, { ...draft, job_id: id, service_id: was?.service_id ?? null, outcome: "refused", detail: draft.detail ? `${draft.detail}; ${why}` : why });
          return { refused, job: was && toJob(was) };
        }
        const now = await t.now();
        // Ended where it stands: run_at is when it ended (as a finished job's), the age retention counts from.
        const [row] = await t.q<JobRow>(
          `UPDATE jobs SET state = 'cancelled', unique_key = NULL, run_at = $2, leased_by = NULL, lease_until = NULL, updated_at = $2
           WHERE id = $1 RETURNING *`,
          [id, now],
        );
        const record = cancelRecord(toJob(was!), draft.actor);
        if (svc) await services().changeIn(t, { serviceId: svc.service_id, history: [record.history] });
        if (row!.event_id) await t.q("UPDATE events SET outcome = $2, detail = $3 WHERE id = $1 AND outcome IS NULL", [row!.event_id, record.outcome.outcome, record.outcome.detail]);
        await audit.insertIn(t, { ...draft, job_id: id, service_id: row!.service_id, outcome: "ok" });
        // The next job of its queue may start now.
        t.afterCommit(wake);
        return { cancelled: toJob(row!) };
      });
    },

    async get(id) {
      const [row] = await db.q<JobRow>("SELECT * FROM jobs WHERE id = $1", [id]);
      return row ? toJob(row) : undefined;
    },

    async list(filter: JobFilter = {}) {
      const where: string[] = [];
      const values: unknown[] = [filter.limit ?? 500];
      const add = (column: string, value: unknown) => {
        values.push(value);
        where.push(`${column} = $${values.length}`);
      };
      if (filter.state) add("state", filter.state);
      if (filter.serviceId) add("service_id", filter.serviceId);
      if (filter.kind) add("kind", filter.kind);
      const sql = `SELECT * FROM jobs ${where.length ? "WHERE " + where.join(" AND ") : ""} ORDER BY id DESC LIMIT $1`;
      return (await db.q<JobRow>(sql, values)).map(toJob);
    },

    async counts() {
      const rows = await db.q<{ state: JobState; n: number }>(JOB_COUNTS);
      folds.due();
      return jobsByState(rows);
    },

    async page(query) {
      return listings.jobs(query);
    },

    async queue() {
      return queueFrom(await readQueue("license-bridge queue", QUEUE)).queue;
    },

    async unfinished(queueKey) {
      return unfinished(db, queueKey);
    },
  };
  /** The gauges of a /metrics scrape, in one statement (Store.gauges). */
  const gauges = async (): Promise<StoreGauges> => {
    const rows = await readQueue<QueueRow & { open_alerts: number }>("license-bridge gauges", GAUGES);
    const { byState, queue } = queueFrom(rows);
    return { jobs: byState, queue, openAlerts: rows[0]!.open_alerts };
  };
  /** What a /metrics scrape reads of the queue, for the index tests: the oldest due job is read in its gauges' statement. */
  const planned: Record<QueueRead, () => [string, unknown[]]> = {
    "job counts": () => [JOB_COUNTS, []],
    "oldest due job": () => [GAUGES, [0]],
  };
  return Object.assign(ops, { insert, unfinishedIn: unfinished, planned, gauges });
}

export type PgJobs = ReturnType<typeof pgJobs>;
