// Counts the SQL statements a process runs, by their text: every run, get, all and iterate of a
// better-sqlite3 statement, the BEGIN, COMMIT, SAVEPOINT and RELEASE of its transactions
// included (better-sqlite3 runs those as prepared statements too). Call `countStatements()`
// before the code under measurement opens its database; `snapshot()` returns the counts so far.
// Exact where a profile only samples: two builds' statements per order compare with no noise.
import Database from "better-sqlite3";

export function countStatements() {
  const counts = new Map();
  const probe = new Database(":memory:");
  const proto = Object.getPrototypeOf(probe.prepare("SELECT 1"));
  probe.close();
  for (const method of ["run", "get", "all", "iterate"]) {
    const original = proto[method];
    proto[method] = function (...args) {
      const sql = this.source.replace(/\s+/g, " ").trim();
      counts.set(sql, (counts.get(sql) ?? 0) + 1);
      return original.apply(this, args);
    };
  }
  return { snapshot: () => Object.fromEntries(counts) };
}
