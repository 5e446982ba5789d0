import type { MailOps, MailRow } from "../ports/mails.js";
import { nowSql, type PgDb } from "./database.js";

/** The `mails` table (migration 002): one row per mail the bridge means to send. */
export function pgMails(db: PgDb): MailOps {
  return {
    async get(key) {
      return (await db.q<MailRow>("SELECT * FROM mails WHERE mail_key = $1", [key]))[0];
    },
    // One upsert: a row already 'sent' is never taken back to 'sending'; the Message-ID of the
    // first attempt stays.
    async begin(row) {
      await db.q(
        `INSERT INTO mails (mail_key, kind, event_id, job_id, service_id, to_address, subject, message_id, state, attempts, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'sending', 1, ${nowSql(9)})
         ON CONFLICT (mail_key) DO UPDATE SET attempts = mails.attempts + 1, last_error = NULL,
           to_address = EXCLUDED.to_address, subject = EXCLUDED.subject
         WHERE mails.state = 'sending'`,
        [row.mail_key, row.kind, row.event_id, row.job_id, row.service_id, row.to_address, row.subject, row.message_id, db.clockParam()],
      );
    },
    async failed(key, error) {
      await db.q("UPDATE mails SET last_error = $1 WHERE mail_key = $2 AND state = 'sending'", [error, key]);
    },
  };
}
