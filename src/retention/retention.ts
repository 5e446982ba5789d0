import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Clock } from "../clock.js";
import type { Logger } from "../log/logger.js";
import { PRUNABLE_KINDS, type PrunableKind, type Store } from "../store/store.js";

const DAY_MS = 86_400_000;

/**
 * The webhook replay window (Standard Webhooks' timestamp tolerance, 5 minutes). Every webhook id
 * is kept for ever (in its event's row, or as a key in webhook_keys once TERMINATED_RETENTION_DAYS
 * deletes the event), so a replayed one is a duplicate for ever; the prune also never empties a
 * payload younger than this, whatever RETENTION_DAYS says.
 */
export const REPLAY_WINDOW_MS = 5 * 60_000;

/** Rows per transaction: small enough that the writer is held for milliseconds, not seconds. */
export const PRUNE_BATCH = 500;

/** Terminated services per transaction: each takes its whole record (tens to hundreds of rows) with it. */
export const TERMINATED_BATCH = 20;

export interface RetentionDeps {
  store: Pick<Store, "retention">;
  clock: Clock;
  /** RETENTION_DAYS. */
  days: number;
  /** The `.eml` outbox (`<dataDir>/outbox`); its old files are removed too. Absent: no files. */
  outboxDir?: string;
  /** Rows per transaction. (Default: PRUNE_BATCH) */
  batchSize?: number;
  /**
   * TERMINATED_RETENTION_DAYS: a service terminated longer ago than this loses its records
   * (history, events, jobs, mail records), keeping its row. Absent: kept for ever.
   */
  terminatedDays?: number;
  /** AUDIT_RETENTION_DAYS: audit entries written longer ago than this are deleted. Absent: kept for ever. */
  auditDays?: number;
}

/** What a prune removed (or, dry, would remove), older than `before`. */
export interface PruneReport {
  dry_run: boolean;
  retention_days: number;
  /** ISO 8601: everything older than this was in scope. */
  before: string;
  /** Succeeded jobs deleted. */
  jobs: number;
  /** Processed events whose payload was emptied (the events themselves stay). */
  event_payloads: number;
  /** Sent mail records deleted. */
  mails: number;
  /** `.eml` files removed from the outbox. */
  outbox_files: number;
  /** Terminated services whose records were pruned (TERMINATED_RETENTION_DAYS; 0 when unset). */
  terminated_services: number;
  /** AUDIT_RETENTION_DAYS, null when the audit trail is not pruned. */
  audit_retention_days: number | null;
  /** ISO 8601: audit entries older than this were in scope; null with audit_retention_days. */
  audit_before: string | null;
  /** Audit entries deleted. */
  audit_entries: number;
}

/** The time before which things may go: RETENTION_DAYS ago, and never inside the replay window. */
export function pruneBefore(now: number, days: number): number {
  return Math.min(now - days * DAY_MS, now - REPLAY_WINDOW_MS);
}

const yieldToOthers = () => new Promise<void>((r) => setImmediate(r));

/**
 * RETENTION_DAYS: removes what nothing depends on any more (see RetentionOps in the store for
 * exactly what is kept), in batches of `batchSize` rows, each its own short transaction with a
 * turn of the event loop between them, so webhooks and jobs are never held up for long. `dryRun`
 * counts instead. Safe to run on several instances at once and to interrupt: what is left is
 * taken next time.
 */
export async function prune(deps: RetentionDeps, options: { dryRun?: boolean } = {}): Promise<PruneReport> {
  const before = pruneBefore(deps.clock.now(), deps.days);
  const dryRun = options.dryRun === true;
  const batch = deps.batchSize ?? PRUNE_BATCH;
  const counts: Record<PrunableKind, number> = dryRun ? await deps.store.retention.prunable(before) : { jobs: 0, events: 0, mails: 0 };
  if (!dryRun) {
    for (const kind of PRUNABLE_KINDS) {
      for (;;) {
        const n = await deps.store.retention.pruneBatch(kind, before, batch);
        counts[kind] += n;
        if (n < batch) break;
        await yieldToOthers();
      }
    }
  }
  const terminated = deps.terminatedDays === undefined ? 0 : await pruneTerminated(deps, pruneBefore(deps.clock.now(), deps.terminatedDays), dryRun);
  const auditBefore = deps.auditDays === undefined ? undefined : pruneBefore(deps.clock.now(), deps.auditDays);
  const audit = auditBefore === undefined ? 0 : await pruneAudit(deps, auditBefore, batch, dryRun);
  if (!dryRun && counts.jobs + counts.events + counts.mails + terminated + audit > 0) await deps.store.retention.reclaim();
  const files = deps.outboxDir ? await pruneOutbox(deps.outboxDir, before, dryRun) : 0;
  return {
    dry_run: dryRun,
    retention_days: deps.days,
    before: new Date(before).toISOString(),
    jobs: counts.jobs,
    event_payloads: counts.events,
    mails: counts.mails,
    outbox_files: files,
    terminated_services: terminated,
    audit_retention_days: deps.auditDays ?? null,
    audit_before: auditBefore === undefined ? null : new Date(auditBefore).toISOString(),
    audit_entries: audit,
  };
}

/** The audit entries written before `before`, `batch` per transaction, as the other kinds. */
async function pruneAudit(deps: RetentionDeps, before: number, batch: number, dryRun: boolean): Promise<number> {
  if (dryRun) return deps.store.retention.auditPrunable(before);
  let total = 0;
  for (;;) {
    const n = await deps.store.retention.pruneAuditBatch(before, batch);
    total += n;
    if (n < batch) return total;
    await yieldToOthers();
  }
}

/** The records of services terminated before `before`, a few services per transaction. */
async function pruneTerminated(deps: RetentionDeps, before: number, dryRun: boolean): Promise<number> {
  if (dryRun) return deps.store.retention.terminatedPrunable(before);
  let total = 0;
  for (;;) {
    const n = await deps.store.retention.pruneTerminatedBatch(before, TERMINATED_BATCH, deps.clock.now());
    total += n;
    if (n < TERMINATED_BATCH) return total;
    await yieldToOthers();
  }
}

/** "20250131T120000123Z-<tag>.eml", as the outbox names its files: the time the mail was written. */
const STAMP = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z-.*\.eml$/;

/** When an outbox file was written: the time in its name, else its modification time. */
async function writtenAt(path: string, name: string): Promise<number> {
  const m = STAMP.exec(name);
  if (m) {
    const [, y, mo, d, h, mi, s, ms] = m.map(Number) as number[];
    const t = Date.UTC(y!, mo! - 1, d!, h!, mi!, s!, ms!);
    if (!Number.isNaN(t)) return t;
  }
  return (await stat(path)).mtimeMs;
}

/** Removes (or counts) the outbox's `.eml` files written before `before`; a missing outbox has none. */
async function pruneOutbox(dir: string, before: number, dryRun: boolean): Promise<number> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw err;
  }
  let n = 0;
  for (const name of names.filter((f) => f.endsWith(".eml"))) {
    const path = join(dir, name);
    try {
      if ((await writtenAt(path, name)) >= before) continue;
      if (!dryRun) await rm(path, { force: true });
      n++;
    } catch (err) {
      // Removed meanwhile (another instance on a shared folder): nothing left to do for it.
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
  return n;
}

/** The daily prune of a running service: first a minute after start, then every `everyMs`. A failure is logged and tried again next time. */
export function scheduleRetention(run: () => Promise<PruneReport>, logger: Logger, everyMs = DAY_MS, firstMs = 60_000): { stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const tick = async () => {
    try {
      const report = await run();
      logger.info({ ...report }, "retention: pruned what RETENTION_DAYS lets go");
    } catch (err) {
      logger.error({ err }, "retention: the prune failed; trying again at the next one");
    }
    if (!stopped) {
      timer = setTimeout(() => void tick(), everyMs);
      timer.unref();
    }
  };
  timer = setTimeout(() => void tick(), firstMs);
  timer.unref();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
