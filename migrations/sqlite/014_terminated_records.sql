-- TERMINATED_RETENTION_DAYS: a terminated service's records (its history, events, jobs and mail
-- records) may be pruned some time after its termination, the row itself kept as a tombstone so
-- that a late event or a new order of the same service is decided exactly as before.
-- records_pruned_at says that was done; the partial index holds the terminated services whose
-- records are still there, oldest update first, so the daily prune reads only those.
ALTER TABLE services ADD COLUMN records_pruned_at INTEGER;
CREATE INDEX services_terminated_records ON services (updated_at) WHERE status = 'terminated' AND records_pruned_at IS NULL;

-- A service that leaves 'terminated' (ordered again) gathers records anew: when it is terminated
-- again, they are pruned again in their turn.
CREATE TRIGGER services_records_again AFTER UPDATE OF status ON services
  WHEN NEW.status <> OLD.status AND NEW.records_pruned_at IS NOT NULL
BEGIN
  UPDATE services SET records_pruned_at = NULL WHERE service_id = NEW.service_id;
END;
