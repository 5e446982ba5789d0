import type { AlertOps } from "../ports/alerts.js";
import { LOCKS, type PgDb } from "./database.js";
import type { PgJobs } from "./jobs.js";

/**
 * Operator alert episodes (migration 003): one mail when an episode opens, none while it stays
 * open. Raising and resolving one key hold its lock: two instances raising at once open one
 * episode and enqueue one mail, and a resolve never slips between a raise's look and its write.
 */
export function pgAlerts(db: PgDb, jobs: PgJobs): AlertOps {
  const lock = (key: string) => [{ ns: LOCKS.alert, key }];
  return {
    async raise(key, subject, detail, enqueue) {
      return db.tx(async (t) => {
        await t.lock(lock(key));
        const now = await t.now();
        const [open] = await t.q("SELECT 1 FROM alerts WHERE key = $1 AND closed_at IS NULL", [key]);
        if (open) {
          await t.q("UPDATE alerts SET last_at = $1, count = count + 1 WHERE key = $2", [now, key]);
          return false;
        }
        await t.q(
          `INSERT INTO alerts (key, subject, detail, opened_at, last_at, count, closed_at) VALUES ($1, $2, $3, $4, $4, 1, NULL)
           ON CONFLICT (key) DO UPDATE SET subject = $2, detail = $3, opened_at = $4, last_at = $4, count = 1, closed_at = NULL`,
          [key, subject, detail, now],
        );
        if (enqueue) await jobs.insert(t, [enqueue(now)]);
        return true;
      });
    },
    async resolve(keys) {
      if (keys.length === 0) return [];
      // Every job that succeeds resolves its keys, and nearly always none is open: one read on
      // the pool instead of a locked transaction. A raise committed after this read is as if it
      // came after the resolve, which the lock would have ordered the same way.
      const [any] = await db.q("SELECT 1 FROM alerts WHERE key = ANY($1::text[]) AND closed_at IS NULL LIMIT 1", [[...keys]]);
      if (!any) return [];
      return db.tx(async (t) => {
        await t.lock(keys.flatMap(lock));
        const rows = await t.q<{ key: string }>("UPDATE alerts SET closed_at = $1 WHERE key = ANY($2::text[]) AND closed_at IS NULL RETURNING key", [await t.now(), [...keys]]);
        return rows.map((r) => r.key);
      });
    },
    async open() {
      return db.q<{ key: string; subject: string; opened_at: number; count: number }>(
        "SELECT key, subject, opened_at, count FROM alerts WHERE closed_at IS NULL ORDER BY opened_at, key",
      );
    },
  };
}
