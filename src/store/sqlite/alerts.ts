import type { Clock } from "../../clock.js";
import type { AlertOps } from "../ports/alerts.js";
import type { Db } from "./database.js";
import type { SqliteJobs } from "./jobs.js";

/** Operator alert episodes (migrations 003): one mail when an episode opens, none while it stays open. */
export function sqliteAlerts(db: Db, clock: Clock, jobs: SqliteJobs): AlertOps {
  const s = {
    find: db.prepare("SELECT opened_at FROM alerts WHERE key = ? AND closed_at IS NULL"),
    open: db.prepare(
      `INSERT INTO alerts (key, subject, detail, opened_at, last_at, count, closed_at) VALUES (@key, @subject, @detail, @now, @now, 1, NULL)
       ON CONFLICT (key) DO UPDATE SET subject = @subject, detail = @detail, opened_at = @now, last_at = @now, count = 1, closed_at = NULL`,
    ),
    touch: db.prepare("UPDATE alerts SET last_at = ?, count = count + 1 WHERE key = ?"),
    close: db.prepare("UPDATE alerts SET closed_at = ? WHERE closed_at IS NULL AND key IN (SELECT value FROM json_each(?)) RETURNING key"),
    openRows: db.prepare("SELECT key, subject, opened_at, count FROM alerts WHERE closed_at IS NULL ORDER BY opened_at"),
    openCount: db.prepare("SELECT COUNT(*) AS n FROM alerts WHERE closed_at IS NULL"),
  };
  // Every job that succeeds resolves its alert keys, and nearly always none is open. One process
  // writes a SQLite file's alerts (the service: the CLI raises none), so it can know how many
  // are open and skip the write when none is. Read once, then kept by raise and resolve.
  let open: number | undefined;
  const openNow = () => (open ??= (s.openCount.get() as { n: number }).n);
  const raise = db.transaction((key: string, subject: string, detail: string, enqueue?: Parameters<AlertOps["raise"]>[3]) => {
    const now = clock.now();
    if (s.find.get(key)) {
      s.touch.run(now, key);
      return false;
    }
    s.open.run({ key, subject, detail, now });
    if (enqueue) jobs.enqueueSync(enqueue(now));
    return true;
  });
  const counted = (opened: boolean) => {
    if (opened && open !== undefined) open++;
    return opened;
  };
  return {
    async raise(key, subject, detail, enqueue) {
      return counted(raise.immediate(key, subject, detail, enqueue));
    },
    async resolve(keys) {
      if (keys.length === 0 || openNow() === 0) return [];
      const closed = (s.close.all(clock.now(), JSON.stringify(keys)) as { key: string }[]).map((r) => r.key);
      if (open !== undefined) open = Math.max(0, open - closed.length);
      return closed;
    },
    async open() {
      return s.openRows.all() as { key: string; subject: string; opened_at: number; count: number }[];
    },
  };
}
