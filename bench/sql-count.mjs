// Counts the SQL statements a process runs, by their text: every run, get, all and iterate of a
// better-sqlite3 statement, the BEGIN, COMMIT, SAVEPOINT and RELEASE of its transactions
// included (better-sqlite3 runs those as prepared statements too), and every query a node-postgres
// client sends (a pool's query goes through a client's; each one is a round trip to the server,
// BEGIN and COMMIT included). Call `countStatements()` before the code under measurement opens
// its database; `snapshot()` returns the counts so far.
// Exact where a profile only samples: two builds' statements per order compare with no noise.
import Database from "better-sqlite3";
import pg from "pg";

export function countStatements() {
  const counts = new Map();
  const count = (text) => {
    const sql = String(text).replace(/\s+/g, " ").trim();
    counts.set(sql, (counts.get(sql) ?? 0) + 1);
  };
  const probe = new Database(":memory:");
  const proto = Object.getPrototypeOf(probe.prepare("SELECT 1"));
  probe.close();
  for (const method of ["run", "get", "all", "iterate"]) {
    const original = proto[method];
    proto[method] = function (...args) {
      count(this.source);
      return original.apply(this, args);
    };
  }
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (config, ...rest) {
    count(typeof config === "string" ? config : (config?.text ?? "(a submittable)"));
    return query.call(this, config, ...rest);
  };
  return { snapshot: () => Object.fromEntries(counts) };
}
