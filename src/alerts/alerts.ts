import { z } from "zod";
import { defineJob, jobKind, jobOf } from "../jobs/define.js";
import type { Logger } from "../log/logger.js";
import type { Mailer } from "../mail/transport.js";
import type { Store } from "../store/store.js";
import { JOB_PRIORITY } from "../vocabulary/jobs.js";

/**
 * One alert mail per episode: the key and the moment the episode opened (for the unique key
 * only; alert mails queued by the release before it have none, and are sent).
 */
export const ALERT_MAIL = jobKind({
  kind: "alert_mail",
  payload: z.object({ key: z.string(), subject: z.string(), detail: z.string(), opened_at: z.number().optional() }),
  uniqueKey: (p) => `alert:${p.key}:${p.opened_at}`,
  maxAttempts: 50,
  // The operator should hear of trouble before the backlog it may be causing clears.
  priority: JOB_PRIORITY.mail,
});
export const ALERT_JOB_KIND = ALERT_MAIL.kind;

export interface AlertsDeps {
  store: Store;
  logger: Logger;
  /** Unset: alerts are only logged. */
  operatorEmail?: string;
}

export interface Alerts {
  /**
   * Opens an episode under `key`, or notes that it is still open. Only the opening mails the
   * operator, so a job that keeps failing for the same reason sends one mail, not one per retry.
   */
  raise(key: string, subject: string, detail: string): Promise<{ opened: boolean }>;
  /** Closes the open episodes under `keys`; the next trouble opens (and mails) a new one. */
  resolve(...keys: string[]): Promise<void>;
  open(): Promise<{ key: string; subject: string; opened_at: number; count: number }[]>;
}

export function createAlerts(deps: AlertsDeps): Alerts {
  const { store, logger } = deps;
  return {
    async raise(key, subject, detail) {
      const mail = deps.operatorEmail ? (openedAt: number) => jobOf(ALERT_MAIL, { key, subject, detail, opened_at: openedAt }) : undefined;
      const opened = await store.alerts.raise(key, subject, detail, mail);
      if (opened) logger.warn({ alert: key, operator_mailed: Boolean(deps.operatorEmail), detail }, `ALERT: ${subject}`);
      return { opened };
    },
    async resolve(...keys) {
      for (const key of await store.alerts.resolve(keys)) logger.info({ alert: key }, "alert resolved");
    },
    open: () => store.alerts.open(),
  };
}

/** Sends one alert mail; its Message-ID is fixed per job, so a resend after a crash is recognisable. */
export function alertMailJob(mailer: Mailer, from: string, to: string) {
  return defineJob(ALERT_MAIL, async (job) => {
    const a = job.payload;
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
  });
}
