import type { ConsoleReadOps } from "../ports/console.js";
import type { MailRow } from "../ports/mails.js";
import type { SessionOps, SessionRow } from "../ports/sessions.js";
import { mergeDays, type DayCount } from "../daily-activity.js";
import type { Db } from "./database.js";

const DAY_MS = 86_400_000;

/** The console's sessions (migration 012): keyed by the SHA-256 of the cookie's id. */
export function sqliteSessions(db: Db): SessionOps {
  const s = {
    create: db.prepare("INSERT INTO console_sessions (id_sha256, operator, role, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)"),
    get: db.prepare("SELECT operator, role, created_at, last_seen_at FROM console_sessions WHERE id_sha256 = ?"),
    touch: db.prepare("UPDATE console_sessions SET last_seen_at = ? WHERE id_sha256 = ?"),
    delete: db.prepare("DELETE FROM console_sessions WHERE id_sha256 = ?"),
    expired: db.prepare("DELETE FROM console_sessions WHERE last_seen_at < ? OR created_at < ?"),
    ofOperator: db.prepare("DELETE FROM console_sessions WHERE operator = ?"),
  };
  return {
    async create(id, r) {
      s.create.run(id, r.operator, r.role, r.created_at, r.last_seen_at);
    },
    async get(id) {
      return s.get.get(id) as SessionRow | undefined;
    },
    async touch(id, at) {
      s.touch.run(at, id);
    },
    async delete(id) {
      return s.delete.run(id).changes > 0;
    },
    async deleteFor(operator) {
      return s.ofOperator.run(operator).changes;
    },
    async deleteExpired(idleBefore, createdBefore) {
      return s.expired.run(idleBefore, createdBefore).changes;
    },
  };
}

/**
 * One series of the overview's chart: its rows per UTC day from `since`, each day a COUNT over
 * the day's range of the series' partial index (migration 012). SQLite counts an index range
 * without reading its rows, where a GROUP BY on the day decodes and sorts every one: a month of
 * a 100,000-licence book's renewals took 300 ms that way against 3 (bench/console.ts). INDEXED
 * BY, because without statistics SQLite prefers the (kind, state) index and reads every renewal
 * ever made. The days run to the newest row, so a row stamped after today counts as before.
 */
function perDay(db: Db, table: string, index: string, where: string, column: string): (since: number) => DayCount[] {
  const count = db.prepare(`SELECT COUNT(*) FROM ${table} INDEXED BY ${index} WHERE ${where} AND ${column} >= ? AND ${column} < ?`).pluck();
  const newest = db.prepare(`SELECT MAX(${column}) FROM ${table} INDEXED BY ${index} WHERE ${where} AND ${column} >= ?`).pluck();
  return (since) => {
    const out: DayCount[] = [];
    const last = newest.get(since) as number | null;
    if (last === null) return out;
    for (let day = Math.floor(since / DAY_MS); day <= Math.floor(last / DAY_MS); day++) {
      const n = count.get(Math.max(since, day * DAY_MS), (day + 1) * DAY_MS) as number;
      if (n > 0) out.push({ day, n });
    }
    return out;
  };
}

/** What the console reads beyond the admin API's listings; each read one index range (migration 012). */
export function sqliteConsoleReads(db: Db): ConsoleReadOps {
  const s = {
    // The counters the triggers of migration 008 keep with every write (per status and provider
    // since 016): a few rows, not every service.
    statusCounts: db.prepare("SELECT status, SUM(n) AS n FROM service_counts GROUP BY status HAVING SUM(n) > 0"),
    mails: db.prepare("SELECT * FROM mails WHERE service_id = ? ORDER BY id DESC LIMIT ?"),
  };
  const orders = perDay(db, "events", "events_orders", "type = 'service.created'", "received_at");
  const renewals = perDay(db, "jobs", "jobs_renewed", "kind = 'renew' AND state = 'succeeded'", "updated_at");
  const failures = perDay(db, "jobs", "jobs_stopped", "state IN ('failed', 'blocked')", "updated_at");
  return {
    async statusCounts() {
      return Object.fromEntries((s.statusCounts.all() as { status: string; n: number }[]).map((r) => [r.status, r.n]));
    },
    async daily(since) {
      return mergeDays(orders(since), renewals(since), failures(since));
    },
    async mailsOf(serviceId, limit) {
      return s.mails.all(serviceId, limit) as MailRow[];
    },
  };
}
