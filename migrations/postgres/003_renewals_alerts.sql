-- PostgreSQL translation of migrations/sqlite/003_renewals_alerts.sql.
-- The renewal sweep reads active licences near their term end: (status, expires_at) serves it
-- as a range scan, and still serves the admin API's filter by status alone.
DROP INDEX services_status;
CREATE INDEX services_due ON services (status, expires_at);

-- Operator alert episodes: one mail when an episode opens, none while it stays open.
CREATE TABLE alerts (
  key        TEXT PRIMARY KEY,
  subject    TEXT NOT NULL,
  detail     TEXT NOT NULL,
  opened_at  BIGINT NOT NULL,
  last_at    BIGINT NOT NULL,
  count      INTEGER NOT NULL DEFAULT 1,
  closed_at  BIGINT
);
