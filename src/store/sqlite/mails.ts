import type { Clock } from "../../clock.js";
import type { MailOps, MailRow } from "../store.js";
import type { Db } from "./database.js";
import type { GroupCommit } from "./group-commit.js";

/** The `mails` table (migrations 002): one row per mail the bridge means to send. */
export function sqliteMails(db: Db, clock: Clock, group: GroupCommit): MailOps {
  const s = {
    get: db.prepare("SELECT * FROM mails WHERE mail_key = ?"),
    // A row already 'sent' is never taken back to 'sending'; the Message-ID of the first attempt stays.
    begin: db.prepare(
      `INSERT INTO mails (mail_key, kind, event_id, job_id, service_id, to_address, subject, message_id, state, attempts, created_at)
       VALUES (@mail_key, @kind, @event_id, @job_id, @service_id, @to_address, @subject, @message_id, 'sending', 1, @now)
       ON CONFLICT (mail_key) DO UPDATE SET attempts = attempts + 1, last_error = NULL,
         to_address = excluded.to_address, subject = excluded.subject
       WHERE state = 'sending'`,
    ),
    failed: db.prepare("UPDATE mails SET last_error = ? WHERE mail_key = ? AND state = 'sending'"),
  };
  return {
    async get(key) {
      return s.get.get(key) as MailRow | undefined;
    },
    async begin(row) {
      // In the group commit rather than a commit of its own: the mail is about to be sent, and
      // the record that it may have gone shares its pages' WAL writes with the other writes of
      // the turn (a job's ending, an intent, a delivery), and is on disk before the send.
      await group.run(() => s.begin.run({ ...row, now: clock.now() }));
    },
    async failed(key, error) {
      s.failed.run(error, key);
    },
  };
}
