import type { Db } from "../store/database.js";
import { createGroupCommit, type GroupCommit } from "../store/group-commit.js";
import type { Clock } from "./clock.js";
import type { EnqueueInput, Job, JobState } from "./types.js";

interface JobRow {
  id: number;
  kind: string;
  queue_key: string | null;
  service_id: string | null;
  event_id: string | null;
  unique_key: string | null;
  payload: string;
  state: JobState;
  attempts: number;
  max_attempts: number;
  run_at: number;
  lease_until: number | null;
  leased_by: string | null;
  intent: string | null;
  last_error: string | null;
  error_code: string | null;
  created_at: number;
  updated_at: number;
}

function toJob(r: JobRow): Job {
  return {
    id: r.id,
    kind: r.kind,
    queueKey: r.queue_key,
    serviceId: r.service_id,
    eventId: r.event_id,
    uniqueKey: r.unique_key,
    payload: JSON.parse(r.payload) as unknown,
    state: r.state,
    attempts: r.attempts,
    maxAttempts: r.max_attempts,
    runAt: r.run_at,
    leaseUntil: r.lease_until,
    leasedBy: r.leased_by,
    intent: r.intent === null ? null : (JSON.parse(r.intent) as unknown),
    lastError: r.last_error,
    errorCode: r.error_code,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export interface JobQueueOptions {
  /** Attempts before a job is failed. (Default: 20) */
  maxAttempts?: number;
  /** How long a claim holds without a heartbeat; a dead worker's jobs come back after it. (Default: 20000 ms) */
  leaseMs?: number;
  /** Durable writes share fsyncs through this (pass the intake's, so both share them). (Default: its own) */
  group?: GroupCommit;
}

export interface ListJobsFilter {
  state?: JobState;
  serviceId?: string;
  kind?: string;
  limit?: number;
}

/**
 * The durable job queue on SQLite. Every method is synchronous so callers can compose it
 * into their own transactions (an event and its job commit together).
 */
export class JobQueue {
  readonly maxAttempts: number;
  readonly leaseMs: number;
  private readonly s;
  private readonly group: GroupCommit;
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    options: JobQueueOptions = {},
  ) {
    this.maxAttempts = options.maxAttempts ?? 20;
    this.leaseMs = options.leaseMs ?? 20_000;
    this.group = options.group ?? createGroupCommit(db);
    this.s = {
      insert: db.prepare(
        `INSERT INTO jobs (kind, queue_key, service_id, event_id, unique_key, payload, state, max_attempts, run_at, created_at, updated_at)
         VALUES (@kind, @queue_key, @service_id, @event_id, @unique_key, @payload, 'queued', @max_attempts, @run_at, @now, @now)
         ON CONFLICT (unique_key) DO NOTHING RETURNING id`,
      ),
      byUnique: db.prepare("SELECT id FROM jobs WHERE unique_key = ?"),
      get: db.prepare("SELECT * FROM jobs WHERE id = ?"),
      reclaim: db.prepare(
        // Never from the claiming worker itself: it knows its jobs still run (a clock jump or a
        // long pause must not start a second copy of a job beside the first).
        "UPDATE jobs SET state = 'queued', leased_by = NULL, lease_until = NULL, updated_at = @now WHERE state = 'running' AND lease_until < @now AND leased_by <> @worker",
      ),
      // A job is runnable when it is due and no earlier job of its queue is unfinished.
      // Blocked counts as unfinished: later events of a service wait for the operator too.
      runnable: db.prepare(
        `SELECT j.id FROM jobs j
         WHERE j.state = 'queued' AND j.run_at <= @now
           AND (j.queue_key IS NULL OR NOT EXISTS (
             SELECT 1 FROM jobs p
             WHERE p.queue_key = j.queue_key AND p.id < j.id AND p.state IN ('queued', 'running', 'blocked')))
         ORDER BY j.run_at, j.id LIMIT @limit`,
      ),
      lease: db.prepare(
        `UPDATE jobs SET state = 'running', attempts = attempts + 1, leased_by = @worker, lease_until = @until, updated_at = @now
         WHERE id = @id AND state = 'queued' RETURNING *`,
      ),
      heartbeat: db.prepare(
        "UPDATE jobs SET lease_until = @until WHERE state = 'running' AND leased_by = @worker",
      ),
      finish: db.prepare(
        `UPDATE jobs SET state = @state, run_at = @run_at, last_error = @error, error_code = @code, leased_by = NULL, lease_until = NULL,
           intent = CASE WHEN @state = 'succeeded' THEN NULL ELSE intent END, updated_at = @now
         WHERE id = @id AND state = 'running' AND leased_by = @worker`,
      ),
      setIntent: db.prepare(
        "UPDATE jobs SET intent = @intent, updated_at = @now WHERE id = @id AND state = 'running' AND leased_by = @worker",
      ),
      release: db.prepare(
        `UPDATE jobs SET state = 'queued', attempts = MAX(attempts - 1, 0), run_at = @now, leased_by = NULL, lease_until = NULL, updated_at = @now
         WHERE id = @id AND state = 'running' AND leased_by = @worker`,
      ),
      defer: db.prepare(
        `UPDATE jobs SET state = 'queued', run_at = @until, last_error = @error, attempts = attempts - @unspent,
           leased_by = NULL, lease_until = NULL, updated_at = @now
         WHERE id = @id AND state = 'running' AND leased_by = @worker`,
      ),
      requeueBlocked: db.prepare(
        `UPDATE jobs SET state = 'queued', run_at = @now, error_code = NULL, updated_at = @now
         WHERE kind = @kind AND state = 'blocked' AND updated_at <= @before`,
      ),
      requeue: db.prepare(
        `UPDATE jobs SET state = 'queued', attempts = 0, run_at = @now, error_code = NULL, updated_at = @now
         WHERE id = @id AND state IN ('failed', 'blocked') RETURNING *`,
      ),
      counts: db.prepare("SELECT state, COUNT(*) AS n FROM jobs GROUP BY state"),
      unfinished: db.prepare(
        "SELECT * FROM jobs WHERE queue_key = ? AND state IN ('queued', 'running', 'blocked') ORDER BY id",
      ),
    };
  }

  /** Adds a job, or finds the one with the same unique key. Call inside a transaction to commit with other rows. */
  enqueue(input: EnqueueInput): { id: number; created: boolean } {
    const now = this.clock.now();
    const row = this.s.insert.get({
      kind: input.kind,
      queue_key: input.queueKey ?? null,
      service_id: input.serviceId ?? null,
      event_id: input.eventId ?? null,
      unique_key: input.uniqueKey ?? null,
      payload: JSON.stringify(input.payload ?? {}),
      max_attempts: input.maxAttempts ?? this.maxAttempts,
      run_at: input.runAt ?? now,
      now,
    }) as { id: number } | undefined;
    if (row) {
      this.notify();
      return { id: row.id, created: true };
    }
    const existing = this.s.byUnique.get(input.uniqueKey) as { id: number };
    return { id: existing.id, created: false };
  }

  /**
   * Takes up to `limit` runnable jobs for `worker`, in one immediate transaction so two
   * processes never claim the same job. Jobs whose lease ran out (their worker died) come back first.
   */
  claim(worker: string, limit: number): Job[] {
    if (limit <= 0) return [];
    return this.db
      .transaction(() => {
        const now = this.clock.now();
        this.s.reclaim.run({ now, worker });
        const ids = this.s.runnable.all({ now, limit }) as { id: number }[];
        const jobs: Job[] = [];
        for (const { id } of ids) {
          const row = this.s.lease.get({ id, worker, until: now + this.leaseMs, now }) as JobRow | undefined;
          if (row) jobs.push(toJob(row));
        }
        return jobs;
      })
      .immediate();
  }

  /**
   * Puts back the running jobs of workers that `isDead` says are gone (e.g. a process on this host
   * that no longer exists), without waiting for their leases to run out. Returns how many.
   */
  reclaimFrom(isDead: (worker: string) => boolean): number {
    return this.db
      .transaction(() => {
        const holders = this.db.prepare("SELECT DISTINCT leased_by AS w FROM jobs WHERE state = 'running'").all() as { w: string }[];
        let n = 0;
        const put = this.db.prepare(
          "UPDATE jobs SET state = 'queued', leased_by = NULL, lease_until = NULL, updated_at = @now WHERE state = 'running' AND leased_by = @worker",
        );
        for (const { w } of holders) if (isDead(w)) n += put.run({ worker: w, now: this.clock.now() }).changes;
        if (n) this.notify();
        return n;
      })
      .immediate();
  }

  /** Extends the leases of every job `worker` holds; the runner calls it while jobs run. */
  heartbeat(worker: string): void {
    this.s.heartbeat.run({ worker, until: this.clock.now() + this.leaseMs });
  }

  /** Records that a call which may charge money is about to be made (or clears it with null). */
  setIntent(id: number, worker: string, intent: unknown): void {
    this.s.setIntent.run({ id, worker, intent: intent === null ? null : JSON.stringify(intent), now: this.clock.now() });
  }

  /**
   * Records the intent and resolves once it is on disk: it guards money, so it must survive
   * even a power cut before the call it announces is sent. Intents of jobs starting together
   * share one fsync (group commit).
   */
  setIntentDurably(id: number, worker: string, intent: unknown): Promise<void> {
    return this.group.run(() => this.setIntent(id, worker, intent));
  }

  /** Done: the intent is cleared with it. Every other ending keeps the intent for the next attempt to check. */
  succeed(id: number, worker: string): boolean {
    return this.finish(id, worker, "succeeded", null, this.clock.now(), null);
  }

  /**
   * Schedules another attempt, or fails the job when its attempts are used up (the claim counted
   * this one, and nothing else changes them while the lease is held). Returns the state it ends in.
   */
  retryLater(job: Pick<Job, "id" | "attempts" | "maxAttempts">, worker: string, error: string, delayMs: number, code: string | null = null): JobState {
    if (job.attempts >= job.maxAttempts) {
      this.finish(job.id, worker, "failed", error, this.clock.now(), code);
      return "failed";
    }
    this.finish(job.id, worker, "queued", error, this.clock.now() + delayMs, null);
    return "queued";
  }

  /** Gives a job back untouched (it was interrupted before doing anything): queued at once, attempt not counted. */
  release(id: number, worker: string): boolean {
    const ok = this.s.release.run({ id, worker, now: this.clock.now() }).changes === 1;
    if (ok) this.notify();
    return ok;
  }

  /**
   * Puts a job back to wait until `until`, whatever its attempts (a wait is not a failure).
   * `spent: false` gives back the attempt the claim counted: this one did nothing but find it must wait.
   */
  defer(id: number, worker: string, until: number, reason: string, spent: boolean): boolean {
    return this.s.defer.run({ id, worker, until, error: reason, unspent: spent ? 0 : 1, now: this.clock.now() }).changes === 1;
  }

  /** Parks a job for the operator (or a later automatic retry), without burning attempts. */
  block(id: number, worker: string, error: string, code: string | null = null): boolean {
    return this.finish(id, worker, "blocked", error, this.clock.now(), code);
  }

  fail(id: number, worker: string, error: string, code: string | null = null): boolean {
    return this.finish(id, worker, "failed", error, this.clock.now(), code);
  }

  /**
   * Puts blocked jobs of `kind` that have waited since `before` back in the queue, attempts
   * kept (a job blocked again simply waits again). Returns how many.
   */
  requeueBlocked(kind: string, before: number): number {
    const n = this.s.requeueBlocked.run({ kind, before, now: this.clock.now() }).changes;
    if (n) this.notify();
    return n;
  }

  /** The operator's retry of a failed or blocked job: queued again at once with fresh attempts. */
  retry(id: number): Job | undefined {
    const row = this.s.requeue.get({ id, now: this.clock.now() }) as JobRow | undefined;
    if (row) this.notify();
    return row ? toJob(row) : undefined;
  }

  get(id: number): Job | undefined {
    const row = this.s.get.get(id) as JobRow | undefined;
    return row ? toJob(row) : undefined;
  }

  list(filter: ListJobsFilter = {}): Job[] {
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
    return (this.db.prepare(sql).all(params) as JobRow[]).map(toJob);
  }

  /** The jobs of one queue not yet finished (queued, running or blocked), in the order they will run. */
  unfinished(queueKey: string): Job[] {
    return (this.s.unfinished.all(queueKey) as JobRow[]).map(toJob);
  }

  counts(): Record<JobState, number> {
    const out: Record<JobState, number> = { queued: 0, running: 0, succeeded: 0, failed: 0, blocked: 0 };
    for (const r of this.s.counts.all() as { state: JobState; n: number }[]) out[r.state] = r.n;
    return out;
  }

  /** Called whenever a job becomes runnable now, so an idle runner wakes without waiting for its poll. */
  onEnqueue(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(): void {
    for (const l of this.listeners) l();
  }

  private finish(
    id: number,
    worker: string,
    state: JobState,
    error: string | null,
    runAt: number,
    code: string | null,
  ): boolean {
    const res = this.s.finish.run({
      id,
      worker,
      state,
      error,
      code,
      run_at: runAt,
      now: this.clock.now(),
    });
    if (state === "queued" || state === "succeeded") this.notify();
    return res.changes === 1;
  }
}
