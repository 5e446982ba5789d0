-- PostgreSQL translation of migrations/sqlite/014_terminated_records.sql (TERMINATED_RETENTION_DAYS).
ALTER TABLE services ADD COLUMN records_pruned_at BIGINT;
CREATE INDEX services_terminated_records ON services (updated_at) WHERE status = 'terminated' AND records_pruned_at IS NULL;

-- A service that leaves 'terminated' (ordered again) gathers records anew.
CREATE FUNCTION services_records_again() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.records_pruned_at := NULL;
  RETURN NEW;
END $$;
CREATE TRIGGER services_records_again BEFORE UPDATE OF status ON services FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.records_pruned_at IS NOT NULL) EXECUTE FUNCTION services_records_again();
