import type { Db } from "./database.js";

export interface GroupCommit {
  /**
   * Runs `write` inside the next group transaction and resolves once that transaction is
   * committed and on disk (`sync` has returned since the commit). If it throws, only it is
   * rolled back and only its promise rejects. `write` may run twice, when a later write of its
   * group throws (see createGroupCommit): it must do nothing but SQL, and what else it calls must
   * bear a repeat (waking the job runner).
   */
  run<T>(write: () => T): Promise<T>;
  /**
   * The same, but resolves as soon as the group transaction is committed, without waiting for
   * its fsync: for writes that a crash may undo but a power cut need not be survived by (a job's
   * ending, which a lost commit only makes run again), so the pages they share with the turn's
   * other writes are written once while their caller does not wait for the disk.
   */
  runCommitted<T>(write: () => T): Promise<T>;
}

/**
 * Group commit: the writes asked for within one turn of the event loop (accepted webhooks,
 * intents before charging calls, mails about to be sent, jobs' endings) share one transaction,
 * and the durable ones among them one fsync, so durability costs one fsync per turn instead of
 * one per write, and the pages the writes share go to the WAL once. The fsync (`sync`, see wal-sync.ts) runs
 * off the event loop: requests and jobs go on while the disk works, and a write's promise
 * resolves only after it. Until then the commit is visible to readers but not yet promised to
 * anyone; a later durable write (the intent before any charging call) fsyncs it too, since the
 * WAL is one file written in order.
 */
export function createGroupCommit(db: Db, sync: () => Promise<void>): GroupCommit {
  type Item = { write: () => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void; durable: boolean };
  let pending: Item[] = [];
  let scheduled = false;
  let syncing = false;

  type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
  // The common case, every write of the group succeeding, runs with no savepoint: a savepoint per
  // write cost a SAVEPOINT and a RELEASE each, and a sub-journal copy of every page the write
  // touched (about 15 µs of a 135 µs delivery, bench/RESULTS.md).
  let begun = false;
  let thrower: { index: number; error: unknown } | undefined;
  const writeAll = db.transaction((batch: Item[]): Outcome[] => {
    begun = true;
    return batch.map((item, index) => {
      try {
        return { ok: true, value: item.write() };
      } catch (error) {
        thrower = { index, error };
        throw error;
      }
    });
  });
  // When one write throws, the whole group is rolled back and run again, each write in a
  // savepoint of its own (a nested better-sqlite3 transaction), so a write that throws is undone
  // alone and the others are committed, as if they had never shared a transaction with it. The
  // first thrower is not run again (it would see what it saw and throw the same), so only the
  // writes before it run twice.
  const inSavepoint = db.transaction((write: () => unknown) => write());
  const writeEach = db.transaction((batch: Item[], skip: { index: number; error: unknown }): Outcome[] =>
    batch.map((item, index) => {
      if (index === skip.index) return { ok: false, error: skip.error };
      try {
        return { ok: true, value: inSavepoint(item.write) };
      } catch (error) {
        return { ok: false, error };
      }
    }),
  );
  /** The group's outcomes; throws what made the group itself fail (e.g. the write lock held elsewhere). */
  const commit = (batch: Item[]): Outcome[] => {
    begun = false;
    thrower = undefined;
    try {
      return writeAll.immediate(batch);
    } catch (error) {
      // Failed before any write ran (BEGIN: the lock is busy), or after all of them (COMMIT):
      // running them again would fail alike.
      if (!begun || !thrower) throw error;
      return writeEach.immediate(batch, thrower);
    }
  };

  const settleAll = (batch: Item[], outcomes: Outcome[], which: (item: Item) => boolean) =>
    batch.forEach((item, i) => {
      if (!which(item)) return;
      const o = outcomes[i]!;
      if (o.ok) item.resolve(o.value);
      else item.reject(o.error);
    });

  /**
   * Commits `batch` and settles its committed-only writes: committed is all they wait for.
   * Undefined when the group could not commit (every write of it is then rejected).
   */
  const commitSettlingCommitted = (batch: Item[]): Outcome[] | undefined => {
    let outcomes;
    try {
      outcomes = commit(batch);
    } catch (error) {
      for (const item of batch) item.reject(error);
      return undefined;
    }
    settleAll(batch, outcomes, (item) => !item.durable);
    return outcomes;
  };

  /**
   * One durable group in flight at a time: the durable writes that come while a group's fsync
   * runs wait for it and then go together, in the next group. Under load the groups grow (fewer,
   * larger commits: the pages they share are written once); alone, a write waits for no one.
   * The committed-only writes that come meanwhile are committed at once, in a group of their
   * own: nothing they wait for is on the disk, so they wait for no fsync, theirs or another's.
   */
  const flush = async () => {
    scheduled = false;
    if (syncing) {
      const now = pending.filter((item) => !item.durable);
      if (now.length === 0) return; // the running flush takes the new writes when its fsync is done
      pending = pending.filter((item) => item.durable);
      commitSettlingCommitted(now);
      return;
    }
    syncing = true;
    try {
      while (pending.length > 0) {
        const batch = pending;
        pending = [];
        const outcomes = commitSettlingCommitted(batch);
        if (!outcomes || !batch.some((item) => item.durable)) continue;
        try {
          await sync();
        } catch (error) {
          // Committed, but not known to be on disk: no promise may be made on it.
          for (const item of batch) if (item.durable) item.reject(error);
          continue;
        }
        settleAll(batch, outcomes, (item) => item.durable);
      }
    } finally {
      syncing = false;
    }
  };

  const enqueue = <T>(write: () => T, durable: boolean): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      pending.push({ write, resolve: resolve as (v: unknown) => void, reject, durable });
      if (!scheduled && (!syncing || !durable)) {
        scheduled = true;
        setImmediate(() => void flush());
      }
    });

  return {
    run: (write) => enqueue(write, true),
    runCommitted: (write) => enqueue(write, false),
  };
}
