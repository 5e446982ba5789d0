-- PostgreSQL translation of migrations/sqlite/015_webhook_keys.sql: the (source, webhook_id) of
-- every event a prune deleted, with its id and type, kept for ever (see there). Same collation as
-- events' own columns.
CREATE TABLE webhook_keys (
  source     TEXT NOT NULL,
  webhook_id TEXT NOT NULL,
  event_id   TEXT NOT NULL,
  type       TEXT NOT NULL,
  PRIMARY KEY (source, webhook_id)
);
