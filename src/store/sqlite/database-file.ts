import { existsSync, statSync } from "node:fs";

export interface DatabaseFileWatch {
  /**
   * Why the file at the path is no longer the database this process has open (deleted or
   * replaced), or undefined while it is. Once lost, always lost: the open connection writes into
   * a file that nobody will read again, and only a restart opens the right one.
   */
  check(): string | undefined;
  stop(): void;
}

export interface WatchOptions {
  /** Told once, when the file is found lost. */
  onLost(reason: string): void;
  /** How often to look without being asked. (Default: 1000 ms) */
  intervalMs?: number;
}

const NEVER_LOST: DatabaseFileWatch = { check: () => undefined, stop: () => {} };

/**
 * Watches that `path` is still the file this process opened: same device and inode, and, for a
 * database in WAL mode, its `-wal` file still there (it holds commits not yet in the main file).
 * SQLite keeps writing through its open descriptor after an `rm` or a `mv` over the path, so
 * without this the service would answer 202 for events stored in a file that is gone.
 */
export function watchDatabaseFile(path: string, options: WatchOptions): DatabaseFileWatch {
  if (path === ":memory:" || path === "") return NEVER_LOST;
  const opened = statSync(path);
  const wal = `${path}-wal`;
  const watchWal = existsSync(wal);
  let lost: string | undefined;

  const look = (): string | undefined => {
    let now;
    try {
      now = statSync(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return code === "ENOENT" ? "the database file was deleted" : `the database file cannot be found (${code ?? String(err)})`;
    }
    if (now.dev !== opened.dev || now.ino !== opened.ino) return "the database file was replaced by another file";
    if (watchWal && !existsSync(wal)) return "the database's -wal file was deleted";
    return undefined;
  };

  // Asked before every statement that writes (write-guard.ts) and every claim, dozens of times an
  // order under load, two system calls each: one look per turn of the event loop answers them all. A file removed
  // during a turn is seen by the first check of the next, as it would have been had it been
  // removed a moment later.
  let lookedThisTurn = false;
  const nextTurn = () => {
    lookedThisTurn = false;
  };
  const check = () => {
    if (lost || lookedThisTurn) return lost;
    lookedThisTurn = true;
    setImmediate(nextTurn);
    const reason = look();
    if (reason) {
      lost = `${reason} while the service was running; restart the service`;
      options.onLost(lost);
    }
    return lost;
  };

  const timer = setInterval(check, options.intervalMs ?? 1_000);
  timer.unref();
  return { check, stop: () => clearInterval(timer) };
}
