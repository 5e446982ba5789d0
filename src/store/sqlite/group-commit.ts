import type { Db } from "./database.js";

export interface GroupCommit {
  /**
   * Runs `write` inside the next group transaction and resolves once that transaction is
   * committed and on disk (`sync` has returned since the commit). `write` runs in its own
   * savepoint: if it throws, only it is rolled back and only its promise rejects.
   */
  run<T>(write: () => T): Promise<T>;
}

/**
 * Group commit: the durable writes asked for within one turn of the event loop (accepted
 * webhooks, intents before charging calls) share one transaction and one fsync, so durability
 * costs one fsync per turn instead of one per write. The fsync (`sync`, see wal-sync.ts) runs
 * off the event loop: requests and jobs go on while the disk works, and a write's promise
 * resolves only after it. Until then the commit is visible to readers but not yet promised to
 * anyone; a later durable write (the intent before any charging call) fsyncs it too, since the
 * WAL is one file written in order.
 */
export function createGroupCommit(db: Db, sync: () => Promise<void>): GroupCommit {
  type Item = { write: () => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void };
  let pending: Item[] = [];
  let scheduled = false;
  let syncing = false;

  // A nested better-sqlite3 transaction is a savepoint: one write that throws is undone alone.
  const inSavepoint = db.transaction((write: () => unknown) => write());
  const writeAll = db.transaction((batch: Item[]) =>
    batch.map((item) => {
      try {
        return { ok: true as const, value: inSavepoint(item.write) };
      } catch (error) {
        return { ok: false as const, error };
      }
    }),
  );

  /**
   * One group in flight at a time: the writes that come while a group's fsync runs wait for it
   * and then go together, in the next group. Under load the groups grow (fewer, larger commits:
   * the pages they share are written once); alone, a write waits for no one.
   */
  const flush = async () => {
    scheduled = false;
    if (syncing) return; // the running flush takes the new writes when its fsync is done
    syncing = true;
    try {
      while (pending.length > 0) {
        const batch = pending;
        pending = [];
        let outcomes;
        try {
          outcomes = writeAll.immediate(batch);
        } catch (error) {
          for (const item of batch) item.reject(error);
          continue;
        }
        try {
          await sync();
        } catch (error) {
          // Committed, but not known to be on disk: no promise may be made on it.
          for (const item of batch) item.reject(error);
          continue;
        }
        outcomes.forEach((o, i) => (o.ok ? batch[i]!.resolve(o.value) : batch[i]!.reject(o.error)));
      }
    } finally {
      syncing = false;
    }
  };

  return {
    run<T>(write: () => T): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        pending.push({ write, resolve: resolve as (v: unknown) => void, reject });
        if (!scheduled && !syncing) {
          scheduled = true;
          setImmediate(() => void flush());
        }
      });
    },
  };
}
