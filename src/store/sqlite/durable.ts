import type { Db } from "./database.js";

/**
 * Runs `fn` with `synchronous = FULL`, so its commit is fsynced before `fn` returns.
 *
 * The connection runs with `synchronous = NORMAL` (in WAL mode: safe across process crashes,
 * but the last commits may roll back on power loss). Two kinds of write must survive power
 * loss too: an accepted webhook (the 202 is a promise to the panel) and the intent recorded
 * before a charging call (the guard against paying twice). They go through here. Since the WAL
 * is one file, this fsync also makes every earlier NORMAL commit durable; what could still be
 * lost is job bookkeeping that the idempotent handlers redo.
 */
export function withFullSync<T>(db: Db, fn: () => T): T {
  db.pragma("synchronous = FULL");
  try {
    return fn();
  } finally {
    db.pragma("synchronous = NORMAL");
  }
}
