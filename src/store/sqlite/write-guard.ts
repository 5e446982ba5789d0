import type { Statement } from "better-sqlite3";
import type { Db } from "./database.js";

const RUNS = ["run", "get", "all", "iterate"] as const;

/**
 * Every statement that writes, prepared on `db` from now on, asks `refusal` before it runs and
 * throws what it answers: one rule for every write of the store, whatever operation, route or job
 * makes it, and any added later. A statement that only reads (SQLite's own `readonly`) is left as
 * it is, at no cost. Inside a transaction the throw rolls the whole transaction back, so a refused
 * operation leaves nothing half-written. The driver's methods are looked up at each call rather
 * than kept, so a wrapper put on them afterwards (test/helpers/sqlite.ts's count) still sees it.
 */
export function refuseWrites(db: Db, refusal: () => Error | undefined): void {
  const prepare = db.prepare;
  db.prepare = function (this: Db, source: string) {
    const stmt = prepare.call(this, source) as Statement;
    if (stmt.readonly) return stmt;
    const driver = Object.getPrototypeOf(stmt) as Record<(typeof RUNS)[number], (...args: unknown[]) => unknown>;
    for (const method of RUNS) {
      Object.defineProperty(stmt, method, {
        value(this: Statement, ...args: unknown[]) {
          const refused = refusal();
          if (refused) throw refused;
          return driver[method].apply(this, args);
        },
      });
    }
    return stmt;
  } as Db["prepare"];
}
