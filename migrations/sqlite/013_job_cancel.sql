-- An operator may cancel a failed or blocked job (issue 26): a new job state, `cancelled`.
-- SQLite cannot alter a CHECK constraint, so the jobs table is rebuilt as SQLite's manual says
-- (lang_altertable.html, "other kinds of table schema changes"): a new table with the wider
-- CHECK, every row copied with its id, the old table dropped (its indexes and triggers with it),
-- the new one renamed, then every index and trigger migrations 001-012 made on jobs made again,
-- as they stand now. No table references jobs, and this runs inside the migration's transaction.
CREATE TABLE jobs_013 (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  kind         TEXT NOT NULL,
  queue_key    TEXT,
  service_id   TEXT,
  event_id     TEXT,
  unique_key   TEXT UNIQUE,
  payload      TEXT NOT NULL DEFAULT '{}',
  state        TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'blocked', 'cancelled')),
  attempts     INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  run_at       INTEGER NOT NULL,
  lease_until  INTEGER,
  leased_by    TEXT,
  intent       TEXT,
  last_error   TEXT,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL,
  error_code   TEXT,
  skipped      TEXT,
  priority     INTEGER NOT NULL DEFAULT 1
);
INSERT INTO jobs_013 (id, kind, queue_key, service_id, event_id, unique_key, payload, state, attempts, max_attempts, run_at,
    lease_until, leased_by, intent, last_error, created_at, updated_at, error_code, skipped, priority)
  SELECT id, kind, queue_key, service_id, event_id, unique_key, payload, state, attempts, max_attempts, run_at,
    lease_until, leased_by, intent, last_error, created_at, updated_at, error_code, skipped, priority
  FROM jobs;

-- Ids go on from the highest ever given, not the highest left: retention deletes old jobs, and
-- history, mails and the audit trail name jobs by id, so an id must never be given twice. The
-- copy's own sequence is the highest id it copied; the old table's is taken over instead.
DELETE FROM sqlite_sequence WHERE name = 'jobs_013';
INSERT INTO sqlite_sequence (name, seq) SELECT 'jobs_013', seq FROM sqlite_sequence WHERE name = 'jobs';

-- Dropping a table fires no DELETE trigger, so job_counts still counts every row copied.
DROP TABLE jobs;
ALTER TABLE jobs_013 RENAME TO jobs;

-- 001, 004, 008 and 012's indexes on jobs, as they stand after 012.
CREATE INDEX jobs_queue ON jobs (queue_key, id) WHERE queue_key IS NOT NULL;
CREATE INDEX jobs_service ON jobs (service_id, id);
CREATE INDEX jobs_change_ip_target ON jobs (json_extract(payload, '$.ip'))
  WHERE kind = 'change_ip' AND state IN ('queued', 'running', 'blocked');
CREATE INDEX jobs_runnable ON jobs (state, priority, run_at);
CREATE INDEX jobs_state_list ON jobs (state);
CREATE INDEX jobs_kind_list ON jobs (kind, state);
CREATE INDEX jobs_renewed ON jobs (updated_at) WHERE kind = 'renew' AND state = 'succeeded';
CREATE INDEX jobs_stopped ON jobs (updated_at) WHERE state IN ('failed', 'blocked');

-- 008's counters: the triggers again, and the counts taken afresh from the rows (they agree
-- already; counted again, no drift that might have crept in survives the rebuild).
CREATE TRIGGER jobs_counted_insert AFTER INSERT ON jobs BEGIN
  INSERT INTO job_counts (state, kind, n) VALUES (NEW.state, NEW.kind, 1)
    ON CONFLICT (state, kind) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER jobs_counted_update AFTER UPDATE OF state, kind ON jobs
  WHEN OLD.state IS NOT NEW.state OR OLD.kind IS NOT NEW.kind BEGIN
  UPDATE job_counts SET n = n - 1 WHERE state = OLD.state AND kind = OLD.kind;
  INSERT INTO job_counts (state, kind, n) VALUES (NEW.state, NEW.kind, 1)
    ON CONFLICT (state, kind) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER jobs_counted_delete AFTER DELETE ON jobs BEGIN
  UPDATE job_counts SET n = n - 1 WHERE state = OLD.state AND kind = OLD.kind;
END;
DELETE FROM job_counts;
INSERT INTO job_counts (state, kind, n) SELECT state, kind, COUNT(*) FROM jobs GROUP BY state, kind;
