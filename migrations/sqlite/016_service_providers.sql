-- Licence providers (issue 36): beside the reseller, the bridge buys from cPanel's Manage2 and
-- CloudLinux's CLN. A service names who sold its licence (provider: every row before this
-- migration is the reseller's), what that provider sold (sku: Manage2's package id, CLN's type
-- number; NULL for the reseller, whose type or bundle is what it sells) and the provider's own
-- id of the licence (upstream_id: Manage2's licenseid; NULL where the upstream has none). No
-- CHECK on provider: another provider would then cost SQLite a rebuild of services (as 013 did
-- for jobs); the store's writes are typed, and every way in checks the name.
ALTER TABLE services ADD COLUMN provider TEXT NOT NULL DEFAULT 'reseller';
ALTER TABLE services ADD COLUMN sku TEXT;
ALTER TABLE services ADD COLUMN upstream_id TEXT;

-- The licence listing by provider (GET /admin/licenses?provider=), with a status or without, in
-- service id order: one range per (provider, status); a provider's licences of every status are
-- the merge of one short range per status, as the jobs of a kind are (jobs_kind_list).
CREATE INDEX services_provider_list ON services (provider, status, service_id);

-- The listings' totals by provider: the counters of 008 kept per status and provider, so a total
-- by status, by provider or by both reads a few counter rows. The table, its triggers and its
-- rows are made again from the services as they are.
DROP TRIGGER services_counted_insert;
DROP TRIGGER services_counted_update;
DROP TRIGGER services_counted_delete;
DROP TABLE service_counts;
CREATE TABLE service_counts (
  status   TEXT NOT NULL,
  provider TEXT NOT NULL,
  n        INTEGER NOT NULL,
  PRIMARY KEY (status, provider)
) WITHOUT ROWID;
INSERT INTO service_counts (status, provider, n) SELECT status, provider, COUNT(*) FROM services GROUP BY status, provider;

CREATE TRIGGER services_counted_insert AFTER INSERT ON services BEGIN
  INSERT INTO service_counts (status, provider, n) VALUES (NEW.status, NEW.provider, 1)
    ON CONFLICT (status, provider) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER services_counted_update AFTER UPDATE OF status, provider ON services
  WHEN OLD.status IS NOT NEW.status OR OLD.provider IS NOT NEW.provider BEGIN
  UPDATE service_counts SET n = n - 1 WHERE status = OLD.status AND provider = OLD.provider;
  INSERT INTO service_counts (status, provider, n) VALUES (NEW.status, NEW.provider, 1)
    ON CONFLICT (status, provider) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER services_counted_delete AFTER DELETE ON services BEGIN
  UPDATE service_counts SET n = n - 1 WHERE status = OLD.status AND provider = OLD.provider;
END;
