-- Customer mail, one row per mail the bridge means to send; `mail_key` (e.g. "install:<event id>")
-- makes it once per event. The row is set to 'sending' with its deterministic Message-ID before
-- the SMTP conversation and to 'sent' after the server accepted, in the transaction that writes
-- the service's history entry. A job that finds 'sent' sends nothing; one that finds 'sending'
-- (an earlier attempt failed, or crashed after the server accepted) sends again with the SAME
-- Message-ID, so a duplicate in that residual window is one that mail clients fold together.
CREATE TABLE mails (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  mail_key    TEXT NOT NULL UNIQUE,
  kind        TEXT NOT NULL,
  event_id    TEXT,
  job_id      INTEGER NOT NULL,
  service_id  TEXT NOT NULL,
  to_address  TEXT NOT NULL,
  subject     TEXT NOT NULL,
  message_id  TEXT NOT NULL,
  state       TEXT NOT NULL CHECK (state IN ('sending', 'sent')),
  attempts    INTEGER NOT NULL DEFAULT 0,
  last_error  TEXT,
  created_at  INTEGER NOT NULL,
  sent_at     INTEGER
);
CREATE INDEX mails_service ON mails (service_id, id);
