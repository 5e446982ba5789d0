import type { Clock } from "../../clock.js";
import { JOB_PRIORITIES, JOB_PRIORITY, type Job, type JobState } from "../../vocabulary/jobs.js";
import { jobsByState, toJob, type JobRow } from "../job-row.js";
import { cancelRecord, cancelRefusalText, whyNotCancellable, type CancelRefusal } from "../cancel-rules.js";
import type { AuditDraft } from "../ports/audit.js";
import type { JobCancel, JobEnding, JobFilter, JobOps, StopRecord } from "../ports/jobs.js";
import type { NewJob, ServiceChange } from "../ports/writes.js";
import type { ServiceRow } from "../service-row.js";
import type { Db } from "./database.js";
import type { GroupCommit } from "./group-commit.js";
import type { QueueRead } from "../listing-reads.js";
import type { SqliteListings } from "./listings.js";
import type { SqliteAudit } from "./audit.js";

/** What a stopped job's record needs of the services: the row, and a change in the same transaction. */
export interface StopTarget {
  getSync(serviceId: string): ServiceRow | undefined;
  changeSync(change: ServiceChange): unknown;
}

/** The durable job queue's SQL on SQLite. Every statement is synchronous; callers compose them into transactions. */
export function sqliteJobs(
  db: Db,
  clock: Clock,
  group: GroupCommit,
  notify: () => void,
  defaultMaxAttempts: number,
  services: () => StopTarget,
  listings: SqliteListings,
  audit: SqliteAudit,
) {
  const s = {
    insert: db.prepare(
      `INSERT INTO jobs (kind, queue_key, service_id, event_id, unique_key, payload, state, max_attempts, priority, run_at, created_at, updated_at)
       VALUES (@kind, @queue_key, @service_id, @event_id, @unique_key, @payload, 'queued', @max_attempts, @priority, @run_at, @now, @now)
       ON CONFLICT (unique_key) DO NOTHING RETURNING id`,
    ),
    // A job with no unique key cannot conflict: the plain INSERT spares the upsert and RETURNING
    // (a third of the statement's cost), and its id is the connection's last rowid.
    insertPlain: db.prepare(
      `INSERT INTO jobs (kind, queue_key, service_id, event_id, payload, state, max_attempts, priority, run_at, created_at, updated_at)
       VALUES (@kind, @queue_key, @service_id, @event_id, @payload, 'queued', @max_attempts, @priority, @run_at, @now, @now)`,
    ),
    byUnique: db.prepare("SELECT id FROM jobs WHERE unique_key = ?"),
    get: db.prepare("SELECT * FROM jobs WHERE id = ?"),
    reclaim: db.prepare(
      // Never from the claiming worker itself: it knows its jobs still run (a clock jump or a
      // long pause must not start a second copy of a job beside the first).
      "UPDATE jobs SET state = 'queued', leased_by = NULL, lease_until = NULL, updated_at = @now WHERE state = 'running' AND lease_until < @now AND leased_by <> @worker",
    ),
    lease: db.prepare(
      `UPDATE jobs SET state = 'running', attempts = attempts + 1, leased_by = @worker, lease_until = @until, updated_at = @now
       WHERE id = @id AND state = 'queued' RETURNING *`,
    ),
    holders: db.prepare("SELECT DISTINCT leased_by AS w FROM jobs WHERE state = 'running'"),
    putBack: db.prepare(
      "UPDATE jobs SET state = 'queued', leased_by = NULL, lease_until = NULL, updated_at = @now WHERE state = 'running' AND leased_by = @worker",
    ),
    heartbeat: db.prepare("UPDATE jobs SET lease_until = @until WHERE state = 'running' AND leased_by = @worker"),
    finish: db.prepare(
      `UPDATE jobs SET state = @state, run_at = @run_at, last_error = @error, error_code = @code, leased_by = NULL, lease_until = NULL,
         intent = CASE WHEN @state = 'succeeded' THEN NULL ELSE intent END, updated_at = @now
       WHERE id = @id AND state = 'running' AND leased_by = @worker`,
    ),
    skip: db.prepare("UPDATE jobs SET skipped = @why, unique_key = NULL WHERE id = @id"),
    defer: db.prepare(
      `UPDATE jobs SET state = 'queued', run_at = @until, last_error = @error, attempts = attempts - @unspent,
         leased_by = NULL, lease_until = NULL, updated_at = @now
       WHERE id = @id AND state = 'running' AND leased_by = @worker`,
    ),
    release: db.prepare(
      `UPDATE jobs SET state = 'queued', attempts = MAX(attempts - 1, 0), run_at = @now, leased_by = NULL, lease_until = NULL, updated_at = @now
       WHERE id = @id AND state = 'running' AND leased_by = @worker`,
    ),
    setIntent: db.prepare("UPDATE jobs SET intent = @intent, updated_at = @now WHERE id = @id AND state = 'running' AND leased_by = @worker"),
    requeueBlocked: db.prepare(
      `UPDATE jobs SET state = 'queued', run_at = @now, error_code = NULL, updated_at = @now
       WHERE kind = @kind AND state = 'blocked' AND updated_at <= @before`,
    ),
    retry: db.prepare(
      `UPDATE jobs SET state = 'queued', attempts = 0, run_at = @now, error_code = NULL, updated_at = @now
       WHERE id = @id AND state IN ('failed', 'blocked') RETURNING *`,
    ),
    // Ended where it stands: run_at is when it ended (as a finished job's), the age retention counts from.
    cancel: db.prepare(
      `UPDATE jobs SET state = 'cancelled', unique_key = NULL, run_at = @now, leased_by = NULL, lease_until = NULL, updated_at = @now
       WHERE id = @id AND state IN ('failed', 'blocked') AND intent IS NULL RETURNING *`,
    ),
    eventSkipped: db.prepare("UPDATE events SET outcome = @outcome, detail = @detail WHERE id = @id AND outcome IS NULL"),
    // The counters the triggers of migration 008 keep: a few rows, however many jobs there are.
    counts: db.prepare("SELECT state, kind, n FROM job_counts WHERE n <> 0"),
    unfinished: db.prepare("SELECT * FROM jobs WHERE queue_key = ? AND state IN ('queued', 'running', 'blocked') ORDER BY id"),
  };

  // A job is runnable when it is due, no job of its queue is running, and no earlier one is
  // queued or blocked. Blocked holds its successors: later events of a service wait for the
  // operator too. A running job holds the earlier ones as well: an operator's retry of an old
  // failed job waits until the job that runs has ended (one job of a queue at a time).
  // One priority per statement: jobs_runnable (state, priority, run_at) then gives the due jobs
  // of that priority as one range that ends at the first job not yet due, however many wait for
  // a later time (one statement over every priority would read those too, on every claim).
  // The LIMIT is written into the SQL, one statement per limit asked for (at most the worker
  // concurrency). A LIMIT that is a bound parameter is read into SQLite's plan
  // (sqlite3ExprIsInteger marks it), so every run, binding it again, compiled the statement
  // anew: 30 µs a claim instead of 5.
  const runnableSql = (limit: number) => `SELECT j.id, j.run_at FROM jobs j
         WHERE j.state = 'queued' AND j.priority = @priority AND j.run_at <= @now
           AND (j.queue_key IS NULL OR NOT EXISTS (
             SELECT 1 FROM jobs p
             WHERE p.queue_key = j.queue_key AND p.id <> j.id
               AND (p.state = 'running' OR (p.id < j.id AND p.state IN ('queued', 'blocked')))))
         ORDER BY j.run_at, j.id LIMIT ${limit}`;
  const runnableByLimit = new Map<number, ReturnType<Db["prepare"]>>();
  const runnable = (limit: number) => {
    let statement = runnableByLimit.get(limit);
    if (!statement) {
      if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`claim limit must be a whole number from 1, not ${limit}`);
      statement = db.prepare(runnableSql(limit));
      runnableByLimit.set(limit, statement);
    }
    return statement;
  };

  /** The job that has waited longest of those that could start now (the first runnable of each priority). */
  const oldestDue = (now: number): number | null => {
    let oldest: number | null = null;
    for (const priority of JOB_PRIORITIES) {
      const row = runnable(1).get({ now, priority }) as { run_at: number } | undefined;
      if (row && (oldest === null || row.run_at < oldest)) oldest = row.run_at;
    }
    return oldest;
  };

  /** Inside the caller's transaction. */
  const enqueue = (job: NewJob): { id: number; created: boolean } => {
    const now = clock.now();
    const values = {
      kind: job.kind,
      queue_key: job.queueKey ?? null,
      service_id: job.serviceId ?? null,
      event_id: job.eventId ?? null,
      payload: JSON.stringify(job.payload ?? {}),
      max_attempts: job.maxAttempts ?? defaultMaxAttempts,
      priority: job.priority ?? JOB_PRIORITY.normal,
      run_at: now + (job.delayMs ?? 0),
      now,
    };
    const row =
      job.uniqueKey == null
        ? { id: Number(s.insertPlain.run(values).lastInsertRowid) }
        : (s.insert.get({ ...values, unique_key: job.uniqueKey }) as { id: number } | undefined);
    if (row) {
      if (!job.delayMs) notify();
      return { id: row.id, created: true };
    }
    return { id: (s.byUnique.get(job.uniqueKey) as { id: number }).id, created: false };
  };

  // Leases last seconds (20 by default): looking for expired ones once a second is soon enough,
  // and spares the busy claim loop a write per claim.
  // (Per worker: a worker's look skips its own jobs, so it says nothing about another's.)
  const reclaimedAt = new Map<string, number>();
  const claim = db.transaction((worker: string, limit: number, leaseMs: number): Job[] => {
    const now = clock.now();
    const last = reclaimedAt.get(worker);
    if (last === undefined || now - last >= 1_000 || now < last) {
      s.reclaim.run({ now, worker });
      reclaimedAt.set(worker, now);
    }
    const jobs: Job[] = [];
    // Each priority's due jobs in turn, the most urgent first, until the limit is reached.
    for (const priority of JOB_PRIORITIES) {
      if (jobs.length >= limit) break;
      for (const { id } of runnable(limit - jobs.length).all({ now, priority }) as { id: number }[]) {
        const row = s.lease.get({ id, worker, until: now + leaseMs, now }) as JobRow | undefined;
        if (row) jobs.push(toJob(row));
      }
    }
    return jobs;
  });

  const reclaimFrom = db.transaction((isDead: (w: string) => boolean): number => {
    let n = 0;
    for (const { w } of s.holders.all() as { w: string }[]) if (isDead(w)) n += s.putBack.run({ worker: w, now: clock.now() }).changes;
    return n;
  });

  const finishRow = (id: number, worker: string, state: JobState, error: string | null, code: string | null, runAt: number) =>
    s.finish.run({ id, worker, state, error, code, run_at: runAt, now: clock.now() }).changes === 1;

  const finishSync = (job: Pick<Job, "id" | "attempts" | "maxAttempts" | "serviceId">, worker: string, ending: JobEnding): JobState | undefined => {
    const now = clock.now();
    let state: JobState;
    let done: boolean;
    switch (ending.state) {
      case "succeeded":
        state = "succeeded";
        done = finishRow(job.id, worker, state, null, null, now);
        if (done && ending.skipped !== undefined) s.skip.run({ id: job.id, why: ending.skipped });
        if (done && ending.change) services().changeSync(ending.change);
        break;
      case "retry":
        // The claim counted this attempt, and nothing else changes attempts while the lease is held.
        state = job.attempts >= job.maxAttempts ? "failed" : "queued";
        done = finishRow(job.id, worker, state, ending.error, state === "failed" ? ending.code : null, state === "failed" ? now : now + ending.delayMs);
        break;
      case "blocked":
      case "failed":
        state = ending.state;
        done = finishRow(job.id, worker, state, ending.error, ending.code, now);
        break;
      case "deferred":
        state = "queued";
        done = s.defer.run({ id: job.id, worker, until: now + ending.delayMs, error: ending.error, unspent: ending.spent ? 0 : 1, now }).changes === 1;
        break;
      case "released":
        state = "queued";
        done = s.release.run({ id: job.id, worker, now }).changes === 1;
        break;
    }
    // Runnable now: the job itself (released, or due again at once), or the next job of its queue.
    const dueNow = ending.state === "released" || ((ending.state === "retry" || ending.state === "deferred") && ending.delayMs <= 0);
    if (done && (state === "failed" || state === "blocked") && "stop" in ending && ending.stop && job.serviceId) recordStop(job.serviceId, state, ending.stop);
    if (done && (state === "succeeded" || state === "failed" || (state === "queued" && dueNow))) notify();
    return done ? state : undefined;
  };

  const recordStop = (serviceId: string, state: "failed" | "blocked", stop: StopRecord) => {
    const svc = services().getSync(serviceId);
    const change = svc && stop(state, svc);
    if (change) services().changeSync({ ...change, serviceId });
  };

  /** The operator's retry and its audit entry, in one transaction: the entry says whether it happened. */
  const retryAudited = db.transaction((id: number, draft: AuditDraft): JobRow | undefined => {
    const now = clock.now();
    const row = s.retry.get({ id, now }) as JobRow | undefined;
    if (row) {
      audit.insertSync({ ...draft, job_id: id, service_id: row.service_id, outcome: "ok" }, now);
      return row;
    }
    const was = s.get.get(id) as JobRow | undefined;
    const why = was ? `the job is ${was.state}; only failed or blocked jobs can be retried` : "no such job";
    audit.insertSync({ ...draft, job_id: id, service_id: was?.service_id ?? null, outcome: "refused", detail: draft.detail ? `${draft.detail}; ${why}` : why }, now);
    return undefined;
  });

  /** The operator's cancel, its audit entry and its record on the service, in one transaction. */
  const cancelAudited = db.transaction((id: number, draft: AuditDraft): { row: JobRow } | { refused: CancelRefusal; was: JobRow | undefined } => {
    const now = clock.now();
    const was = s.get.get(id) as JobRow | undefined;
    const refused = whyNotCancellable(was);
    const row = refused ? undefined : (s.cancel.get({ id, now }) as JobRow | undefined);
    if (!row) {
      const why = cancelRefusalText(refused ?? "not_stopped", was && toJob(was));
      audit.insertSync({ ...draft, job_id: id, service_id: was?.service_id ?? null, outcome: "refused", detail: draft.detail ? `${draft.detail}; ${why}` : why }, now);
      return { refused: refused ?? "not_stopped", was };
    }
    const record = cancelRecord(toJob(was!), draft.actor);
    if (row.service_id && services().getSync(row.service_id)) services().changeSync({ serviceId: row.service_id, history: [record.history] });
    if (row.event_id) s.eventSkipped.run({ id: row.event_id, ...record.outcome });
    audit.insertSync({ ...draft, job_id: id, service_id: row.service_id, outcome: "ok" }, now);
    return { row };
  });

  const ops: JobOps & { enqueueSync: typeof enqueue } = {
    enqueueSync: enqueue,
    async enqueue(job) {
      return enqueue(job);
    },
    async claim(worker, limit, leaseMs) {
      return limit > 0 ? claim.immediate(worker, limit, leaseMs) : [];
    },
    async reclaimFrom(isDead) {
      const n = reclaimFrom.immediate(isDead);
      if (n) notify();
      return n;
    },
    async heartbeat(worker, leaseMs) {
      s.heartbeat.run({ worker, until: clock.now() + leaseMs });
    },
    async setIntent(id, worker, intent, durable) {
      const write = () => s.setIntent.run({ id, worker, intent: intent === null ? null : JSON.stringify(intent), now: clock.now() }).changes === 1;
      return durable ? await group.run(write) : write();
    },
    async finish(job, worker, ending) {
      // A job's ending, with its service's record, joins the group commit (the intake's and the
      // intents' too): endings that come in the same turn share one transaction, so the pages
      // each of them rewrites (the job and service counters, the tails of the jobs' state lists,
      // the history, the events' outcomes) go to the WAL once per group instead of once per job
      // (bench:pipeline, about 7 % of the CPU per order). It waits for the commit, not the
      // fsync, as its own commit did: an ending a power cut loses is a job run again.
      return group.runCommitted(() => finishSync(job, worker, ending));
    },
    async requeueBlocked(kind, olderThanMs) {
      const now = clock.now();
      const n = s.requeueBlocked.run({ kind, before: now - olderThanMs, now }).changes;
      if (n) notify();
      return n;
    },
    async retry(id, draft) {
      const row = draft ? retryAudited.immediate(id, draft) : (s.retry.get({ id, now: clock.now() }) as JobRow | undefined);
      if (row) notify();
      return row ? toJob(row) : undefined;
    },
    async cancel(id, draft): Promise<JobCancel> {
      const r = cancelAudited.immediate(id, draft);
      if ("refused" in r) return { refused: r.refused, job: r.was && toJob(r.was) };
      // The next job of its queue may start now.
      notify();
      return { cancelled: toJob(r.row) };
    },
    async get(id) {
      const row = s.get.get(id) as JobRow | undefined;
      return row ? toJob(row) : undefined;
    },
    async list(filter: JobFilter = {}) {
      const where: string[] = [];
      const params: Record<string, unknown> = { limit: filter.limit ?? 500 };
      if (filter.state) {
        where.push("state = @state");
        params.state = filter.state;
      }
      if (filter.serviceId) {
        where.push("service_id = @service_id");
        params.service_id = filter.serviceId;
      }
      if (filter.kind) {
        where.push("kind = @kind");
        params.kind = filter.kind;
      }
      const sql = `SELECT * FROM jobs ${where.length ? "WHERE " + where.join(" AND ") : ""} ORDER BY id DESC LIMIT @limit`;
      return (db.prepare(sql).all(params) as JobRow[]).map(toJob);
    },
    async counts() {
      return jobsByState(s.counts.all() as { state: JobState; n: number }[]);
    },
    async page(query) {
      return listings.jobs(query);
    },
    async queue() {
      const queued: Record<string, number> = {};
      for (const r of s.counts.all() as { state: JobState; kind: string; n: number }[]) if (r.state === "queued") queued[r.kind] = r.n;
      const now = clock.now();
      const oldestDueAt = oldestDue(now);
      return { queued, oldestDueAt, oldestDueAgeMs: oldestDueAt === null ? 0 : Math.max(0, now - oldestDueAt) };
    },
    async unfinished(queueKey) {
      return unfinishedSync(queueKey);
    },
  };
  const unfinishedSync = (queueKey: string): Job[] => (s.unfinished.all(queueKey) as JobRow[]).map(toJob);
  /** What a /metrics scrape reads of the queue, for the index tests. */
  const planned: Record<QueueRead, () => [string, Record<string, unknown>]> = {
    "job counts": () => ["SELECT state, kind, n FROM job_counts WHERE n <> 0", {}],
    "oldest due job": () => [runnableSql(1), { now: 0, priority: JOB_PRIORITY.normal }],
  };
  return Object.assign(ops, { unfinishedSync, planned });
}

export type SqliteJobs = ReturnType<typeof sqliteJobs>;
