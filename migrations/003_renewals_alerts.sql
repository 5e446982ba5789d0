-- The renewal sweep reads only active licences near their term end.
CREATE INDEX services_due ON services (expires_at) WHERE status = 'active';

-- Operator alert episodes: one mail when an episode opens, none while it stays open.
CREATE TABLE alerts (
  key        TEXT PRIMARY KEY,
  subject    TEXT NOT NULL,
  detail     TEXT NOT NULL,
  opened_at  INTEGER NOT NULL,
  last_at    INTEGER NOT NULL,
  count      INTEGER NOT NULL DEFAULT 1,
  closed_at  INTEGER
);
