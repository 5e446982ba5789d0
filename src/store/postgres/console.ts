import { mergeDays, type DayCount } from "../daily-activity.js";
import type { ConsoleReadOps } from "../ports/console.js";
import type { MailRow } from "../ports/mails.js";
import type { SessionOps, SessionRow } from "../ports/sessions.js";
import type { PgDb } from "./database.js";

const DAY_MS = 86_400_000;

/** The console's sessions (migration 012): keyed by the SHA-256 of the cookie's id. */
export function pgSessions(db: PgDb): SessionOps {
  return {
    async create(id, r) {
      await db.q("INSERT INTO console_sessions (id_sha256, operator, role, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $5)", [
        id,
        r.operator,
        r.role,
        r.created_at,
        r.last_seen_at,
      ]);
    },
    async get(id) {
      return (await db.q<SessionRow>("SELECT operator, role, created_at, last_seen_at FROM console_sessions WHERE id_sha256 = $1", [id]))[0];
    },
    async touch(id, at) {
      await db.q("UPDATE console_sessions SET last_seen_at = $1 WHERE id_sha256 = $2", [at, id]);
    },
    async delete(id) {
      return (await db.q("DELETE FROM console_sessions WHERE id_sha256 = $1 RETURNING 1", [id])).length > 0;
    },
    async deleteFor(operator) {
      return (await db.q("DELETE FROM console_sessions WHERE operator = $1 RETURNING 1", [operator])).length;
    },
    async deleteExpired(idleBefore, createdBefore) {
      return (await db.q("DELETE FROM console_sessions WHERE last_seen_at < $1 OR created_at < $2 RETURNING 1", [idleBefore, createdBefore])).length;
    },
  };
}

/** What the console reads beyond the admin API's listings; each read one index range (migration 012). */
export function pgConsoleReads(db: PgDb): ConsoleReadOps {
  const day = (col: string) => `${col} / ${DAY_MS} AS day`;
  return {
    async statusCounts() {
      // The counters of migration 008 and their change log (tallies.ts), read in one snapshot: a few rows, not every service.
      const rows = await db.q<{ status: string; n: number }>(
        `SELECT status, SUM(n)::int AS n FROM (SELECT status, n FROM service_counts UNION ALL SELECT status, n FROM service_count_changes) c
         GROUP BY status HAVING SUM(n) > 0`,
      );
      return Object.fromEntries(rows.map((r) => [r.status, r.n]));
    },
    async daily(since) {
      const [orders, renewals, failures] = await Promise.all([
        db.q<DayCount>(`SELECT ${day("received_at")}, COUNT(*)::int AS n FROM events WHERE type = 'service.created' AND received_at >= $1 GROUP BY 1`, [since]),
        db.q<DayCount>(`SELECT ${day("updated_at")}, COUNT(*)::int AS n FROM jobs WHERE kind = 'renew' AND state = 'succeeded' AND updated_at >= $1 GROUP BY 1`, [since]),
        db.q<DayCount>(`SELECT ${day("updated_at")}, COUNT(*)::int AS n FROM jobs WHERE state IN ('failed', 'blocked') AND updated_at >= $1 GROUP BY 1`, [since]),
      ]);
      return mergeDays(orders, renewals, failures);
    },
    async mailsOf(serviceId, limit) {
      return db.q<MailRow>("SELECT * FROM mails WHERE service_id = $1 ORDER BY id DESC LIMIT $2", [serviceId, limit]);
    },
  };
}
