import type { Clock } from "../jobs/clock.js";
import type { JobHandler } from "../jobs/runner.js";
import type { JobQueue } from "../jobs/queue.js";
import type { Job } from "../jobs/types.js";
import type { Logger } from "../log/logger.js";
import type { Mailer } from "../mail/transport.js";
import type { Db } from "../store/database.js";
import { z } from "zod";

export const ALERT_JOB_KIND = "alert_mail";

export interface AlertsDeps {
  db: Db;
  queue: JobQueue;
  clock: Clock;
  logger: Logger;
  /** Unset: alerts are only logged. */
  operatorEmail?: string;
}

export interface Alerts {
  /**
   * Opens an episode under `key`, or notes that it is still open. Only the opening mails the
   * operator, so a job that keeps failing for the same reason sends one mail, not one per retry.
   */
  raise(key: string, subject: string, detail: string): { opened: boolean };
  /** Closes the open episode under `key`; the next trouble opens (and mails) a new one. */
  resolve(key: string): void;
  open(): { key: string; subject: string; opened_at: number; count: number }[];
}

export function createAlerts(deps: AlertsDeps): Alerts {
  const { db, queue, clock, logger } = deps;
  const find = db.prepare("SELECT opened_at FROM alerts WHERE key = ? AND closed_at IS NULL");
  const reopen = db.prepare(
    `INSERT INTO alerts (key, subject, detail, opened_at, last_at, count, closed_at) VALUES (@key, @subject, @detail, @now, @now, 1, NULL)
     ON CONFLICT (key) DO UPDATE SET subject = @subject, detail = @detail, opened_at = @now, last_at = @now, count = 1, closed_at = NULL`,
  );
  const touch = db.prepare("UPDATE alerts SET last_at = ?, count = count + 1 WHERE key = ?");
  const close = db.prepare("UPDATE alerts SET closed_at = ? WHERE key = ? AND closed_at IS NULL");
  const openRows = db.prepare("SELECT key, subject, opened_at, count FROM alerts WHERE closed_at IS NULL ORDER BY opened_at");

  const raise = db.transaction((key: string, subject: string, detail: string) => {
    const now = clock.now();
    if (find.get(key)) {
      touch.run(now, key);
      return { opened: false };
    }
    reopen.run({ key, subject, detail, now });
    if (deps.operatorEmail) {
      queue.enqueue({ kind: ALERT_JOB_KIND, uniqueKey: `alert:${key}:${now}`, payload: { key, subject, detail }, maxAttempts: 50 });
    }
    return { opened: true };
  });

  return {
    raise(key, subject, detail) {
      const r = raise.immediate(key, subject, detail);
      if (r.opened) logger.warn({ alert: key, operator_mailed: Boolean(deps.operatorEmail), detail }, `ALERT: ${subject}`);
      return r;
    },
    resolve(key) {
      if (close.run(clock.now(), key).changes) logger.info({ alert: key }, "alert resolved");
    },
    open: () => openRows.all() as { key: string; subject: string; opened_at: number; count: number }[],
  };
}

const alertPayload = z.object({ key: z.string(), subject: z.string(), detail: z.string() });

/** Sends one alert mail; its Message-ID is fixed per job, so a resend after a crash is recognisable. */
export function alertMailHandler(mailer: Mailer, from: string, to: string): JobHandler {
  return async (job: Job) => {
    const a = alertPayload.parse(job.payload);
    const text = `${a.detail}\n\nAlert key: ${a.key}\nThis alert mails once per episode; it is resolved when the cause goes away.\n` +
      "See GET /admin/jobs?state=blocked and `npx license-bridge jobs list` for the jobs concerned.\n";
    await mailer.send({
      from,
      to: { address: to },
      subject: `[license-bridge] ${a.subject}`,
      text,
      html: `<pre>${text.replace(/[&<>]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;" })[c]!)}</pre>`,
      messageId: `<alert.${job.id}@license-bridge>`,
      tag: `alert-${job.id}`,
    });
  };
}
