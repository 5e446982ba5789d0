-- Reads at scale (issue 25): every listing is a page read by an index, totals and the /metrics
-- job gauge come from counters kept with the writes, and claims take customer-facing jobs first.
-- SQLite ends every index with the rowid, and jobs.id and history.id are the rowid: an index
-- on (state) is an index on (state, id).

-- Claims take the due jobs of each priority in turn, the most urgent (lowest) first: an install
-- mail is not left behind a backlog of lifecycle jobs queued before it. One service's jobs keep
-- their order whatever their priorities (a job never starts before an earlier one of its queue).
ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 1;
UPDATE jobs SET priority = 0 WHERE kind IN ('mail_install', 'alert_mail');
DROP INDEX jobs_runnable;
CREATE INDEX jobs_runnable ON jobs (state, priority, run_at);

-- Listings, newest first: by state, and by kind (and state); by service is jobs_service.
CREATE INDEX jobs_state_list ON jobs (state);
CREATE INDEX jobs_kind_list ON jobs (kind, state);

-- Licences by status in service id order, and the search's keys: service id (the primary key),
-- IP (services_ip), licence key (services_license_key), and the customer's e-mail in any case.
CREATE INDEX services_status_list ON services (status, service_id);
CREATE INDEX services_email ON services (lower(customer_email));

-- A service's history newest first, by time: events_service is (service_id, received_at, rowid).
DROP INDEX history_service;
CREATE INDEX history_service ON history (service_id, at);

-- Counters kept by triggers in the transaction of every write, so they are never out of step
-- with the rows (a crash undoes both): the job gauge, queue depth and the listings' totals read
-- a few rows here instead of counting the tables. Started from the rows as they are.
CREATE TABLE job_counts (
  state TEXT NOT NULL,
  kind  TEXT NOT NULL,
  n     INTEGER NOT NULL,
  PRIMARY KEY (state, kind)
) WITHOUT ROWID;
INSERT INTO job_counts (state, kind, n) SELECT state, kind, COUNT(*) FROM jobs GROUP BY state, kind;

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

CREATE TABLE service_counts (
  status TEXT NOT NULL PRIMARY KEY,
  n      INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO service_counts (status, n) SELECT status, COUNT(*) FROM services GROUP BY status;

CREATE TRIGGER services_counted_insert AFTER INSERT ON services BEGIN
  INSERT INTO service_counts (status, n) VALUES (NEW.status, 1)
    ON CONFLICT (status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER services_counted_update AFTER UPDATE OF status ON services
  WHEN OLD.status IS NOT NEW.status BEGIN
  UPDATE service_counts SET n = n - 1 WHERE status = OLD.status;
  INSERT INTO service_counts (status, n) VALUES (NEW.status, 1)
    ON CONFLICT (status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER services_counted_delete AFTER DELETE ON services BEGIN
  UPDATE service_counts SET n = n - 1 WHERE status = OLD.status;
END;
