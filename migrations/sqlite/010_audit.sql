-- Who did what through the admin API, the CLI and the console (issue 26): one row per action an
-- operator took, written in the transaction of the change it records. Never pruned: it outlives
-- RETENTION_DAYS on purpose.
CREATE TABLE audit (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  at         INTEGER NOT NULL,
  actor      TEXT NOT NULL CHECK (actor <> ''),
  action     TEXT NOT NULL CHECK (action <> ''),
  service_id TEXT,
  job_id     INTEGER,
  outcome    TEXT NOT NULL CHECK (outcome IN ('ok', 'refused', 'failed')),
  detail     TEXT
);
CREATE INDEX audit_actor ON audit (actor, id);
CREATE INDEX audit_service ON audit (service_id, id);
CREATE INDEX audit_at ON audit (at);
