import type { Clock } from "../../clock.js";
import type { MailOps, MailRow } from "../ports/mails.js";
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
      // In the turn's group transaction rather than a commit of its own, so its pages' WAL writes
      // are shared with the turn's other writes (a job's ending, an intent, a delivery). Committed
      // before the send, not fsynced: a record a power cut loses only sends the mail again, with
      // the same Message-ID, and an fsync wait per mail cost more than the shared pages save.
      await group.runCommitted(() => s.begin.run({ ...row, now: clock.now() }));
    },
    async failed(key, error) {
      s.failed.run(error, key);
    },
  };
}
