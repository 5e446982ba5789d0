import { open, type FileHandle } from "node:fs/promises";
import type { Db } from "./database.js";

/**
 * Makes every commit so far survive a power cut, off the event loop: an fsync of the WAL file
 * on libuv's thread pool.
 *
 * The connection commits with `synchronous = NORMAL`: in WAL mode a commit is a write to the WAL
 * file, safe across a process crash (it is in the OS's cache) but not yet on disk. fsync of that
 * file, from any descriptor, puts on disk every commit written to it before the call. A
 * checkpoint that copied commits into the database file in between syncs the database file
 * itself (SQLite does at every checkpoint), so those are durable as well. Calls that come while
 * an fsync runs share the next one, which starts once the running one ends (it may have started
 * before their commits).
 */
export interface WalSync {
  /** Resolves once every commit made before the call is on disk. */
  sync(): Promise<void>;
  /** Closes the descriptor (after the fsync that runs, if any). */
  close(): Promise<void>;
}

export function walSync(db: Db): WalSync {
  // An in-memory or temporary database has no file to make durable.
  if (db.memory || db.name === "") return { sync: async () => {}, close: async () => {} };
  const path = `${db.name}-wal`;
  let handle: FileHandle | undefined;
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;

  // The WAL file stays the same file while this connection is open (SQLite opens it once and
  // keeps it; only leaving WAL mode, which nothing here does, would replace it).
  const fsyncOnce = async () => {
    handle ??= await open(path, "r");
    await handle.sync();
  };

  const sync = (): Promise<void> => {
    if (!running) {
      running = fsyncOnce().finally(() => (running = undefined));
      return running;
    }
    next ??= running.then(
      () => {
        next = undefined;
        return sync();
      },
      () => {
        next = undefined;
        return sync();
      },
    );
    return next;
  };
  return {
    sync,
    async close() {
      await Promise.allSettled([running, next]);
      await handle?.close();
      handle = undefined;
    },
  };
}
