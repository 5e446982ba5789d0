-- PostgreSQL translation of migrations/sqlite/008_reads_at_scale.sql. Its indexes name the id
-- (or seq) as their last column, which SQLite's have as the rowid; and the counters take their
-- changes through a log, as explained below.

-- Claims take the due jobs of each priority in turn, the most urgent (lowest) first.
ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 1;
UPDATE jobs SET priority = 0 WHERE kind IN ('mail_install', 'alert_mail');
DROP INDEX jobs_runnable;
CREATE INDEX jobs_runnable ON jobs (state, priority, run_at, id);

-- Listings, newest first: by state, and by kind (and state); by service is jobs_service.
CREATE INDEX jobs_state_list ON jobs (state, id);
CREATE INDEX jobs_kind_list ON jobs (kind, state, id);

-- Licences by status in service id order, and the search's keys.
CREATE INDEX services_status_list ON services (status, service_id);
CREATE INDEX services_email ON services (lower(customer_email));

-- A service's history newest first, by time, in both of its tables.
DROP INDEX history_service;
CREATE INDEX history_service ON history (service_id, at, id);
DROP INDEX events_service;
CREATE INDEX events_service ON events (service_id, received_at, seq);

-- Counters kept by triggers in the transaction of every write. Unlike SQLite, many transactions
-- write at once here: one counter row updated by every job would make each of them wait for the
-- one before it to commit. So a trigger only appends its change to a log (no row is shared, no
-- lock taken), and a reader folds the log into the counters (src/store/postgres/tallies.ts); a
-- count is the counter plus what the log still holds, exact and crash-safe either way.
CREATE TABLE job_counts (
  state TEXT NOT NULL,
  kind  TEXT NOT NULL,
  n     BIGINT NOT NULL,
  PRIMARY KEY (state, kind)
);
CREATE TABLE job_count_changes (
  state TEXT NOT NULL,
  kind  TEXT NOT NULL,
  n     INTEGER NOT NULL
);
INSERT INTO job_counts (state, kind, n) SELECT state, kind, COUNT(*) FROM jobs GROUP BY state, kind;

CREATE FUNCTION jobs_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN INSERT INTO job_count_changes (state, kind, n) VALUES (OLD.state, OLD.kind, -1); END IF;
  IF TG_OP <> 'DELETE' THEN INSERT INTO job_count_changes (state, kind, n) VALUES (NEW.state, NEW.kind, 1); END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER jobs_counted AFTER INSERT OR DELETE ON jobs FOR EACH ROW EXECUTE FUNCTION jobs_counted();
CREATE TRIGGER jobs_counted_update AFTER UPDATE OF state, kind ON jobs FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state OR OLD.kind IS DISTINCT FROM NEW.kind) EXECUTE FUNCTION jobs_counted();

CREATE TABLE service_counts (
  status TEXT NOT NULL PRIMARY KEY,
  n      BIGINT NOT NULL
);
CREATE TABLE service_count_changes (
  status TEXT NOT NULL,
  n      INTEGER NOT NULL
);
INSERT INTO service_counts (status, n) SELECT status, COUNT(*) FROM services GROUP BY status;

CREATE FUNCTION services_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN INSERT INTO service_count_changes (status, n) VALUES (OLD.status, -1); END IF;
  IF TG_OP <> 'DELETE' THEN INSERT INTO service_count_changes (status, n) VALUES (NEW.status, 1); END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER services_counted AFTER INSERT OR DELETE ON services FOR EACH ROW EXECUTE FUNCTION services_counted();
CREATE TRIGGER services_counted_update AFTER UPDATE OF status ON services FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION services_counted();
