-- PostgreSQL translation of migrations/sqlite/012_console_sessions.sql.
-- The operator console's sessions (issue 26): server-side, so a logout or an expiry ends one for
-- good. The cookie carries a random id; only its SHA-256 is kept here, so a copy of the database
-- opens no session. The operator's name and role are those the login token resolved to.
CREATE TABLE console_sessions (
  id_sha256     TEXT PRIMARY KEY,
  operator      TEXT NOT NULL,
  role          TEXT NOT NULL,
  created_at    BIGINT NOT NULL,
  last_seen_at  BIGINT NOT NULL
);
-- Expired sessions are deleted by their age at each login.
CREATE INDEX console_sessions_seen ON console_sessions (last_seen_at);

-- The console finds a licence by the customer's e-mail, whatever its case. The same index as
-- the reads-at-scale migration's (issue 25): IF NOT EXISTS, so either may come first.
CREATE INDEX IF NOT EXISTS services_email ON services (lower(customer_email));

-- The overview's 30-day chart: orders, renewals and jobs that stopped, counted by day. Each is
-- a small partial index, so the chart reads a range of its own rows, not every event or job.
CREATE INDEX events_orders ON events (received_at) WHERE type = 'service.created';
CREATE INDEX jobs_renewed ON jobs (updated_at) WHERE kind = 'renew' AND state = 'succeeded';
CREATE INDEX jobs_stopped ON jobs (updated_at) WHERE state IN ('failed', 'blocked');

-- Licences of one status in service id order, a page at a time (the same index as issue 25's).
CREATE INDEX IF NOT EXISTS services_status_list ON services (status, service_id);
