-- PostgreSQL translation of migrations/sqlite/016_service_providers.sql: who sold a service's
-- licence (every row before this migration is the reseller's), what it sold, and its own id of
-- the licence (see there). Adding a column with a constant default rewrites no row here.
ALTER TABLE services ADD COLUMN provider TEXT NOT NULL DEFAULT 'reseller';
ALTER TABLE services ADD COLUMN sku TEXT;
ALTER TABLE services ADD COLUMN upstream_id TEXT;

-- The licence listing by provider, by status or not, in service id order (one range per status).
CREATE INDEX services_provider_list ON services (provider, status, service_id);

-- The counters of 008 and their change log, kept per status and provider, made again from the
-- services as they are (the log's rows go with the old counters: the new ones count every row).
-- No write can slip between the count and the new triggers: the ALTER TABLEs above hold
-- services locked until this migration commits.
DROP TRIGGER services_counted ON services;
DROP TRIGGER services_counted_update ON services;
DROP FUNCTION services_counted();
DROP TABLE service_counts;
DROP TABLE service_count_changes;
CREATE TABLE service_counts (
  status   TEXT NOT NULL,
  provider TEXT NOT NULL,
  n        BIGINT NOT NULL,
  PRIMARY KEY (status, provider)
);
CREATE TABLE service_count_changes (
  status   TEXT NOT NULL,
  provider TEXT NOT NULL,
  n        INTEGER NOT NULL
);
INSERT INTO service_counts (status, provider, n) SELECT status, provider, COUNT(*) FROM services GROUP BY status, provider;

CREATE FUNCTION services_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN INSERT INTO service_count_changes (status, provider, n) VALUES (OLD.status, OLD.provider, -1); END IF;
  IF TG_OP <> 'DELETE' THEN INSERT INTO service_count_changes (status, provider, n) VALUES (NEW.status, NEW.provider, 1); END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER services_counted AFTER INSERT OR DELETE ON services FOR EACH ROW EXECUTE FUNCTION services_counted();
CREATE TRIGGER services_counted_update AFTER UPDATE OF status, provider ON services FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.provider IS DISTINCT FROM NEW.provider) EXECUTE FUNCTION services_counted();
