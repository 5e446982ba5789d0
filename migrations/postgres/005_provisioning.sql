-- PostgreSQL translation of migrations/sqlite/005_provisioning.sql.
-- The provisioning API names a licence by a key of its own, stable for the life of the service.
-- Existing rows get a key in the code's own format (src/store/ids.ts): lb_ and 24 hex digits of a random UUID.
ALTER TABLE services ADD COLUMN license_key TEXT;
UPDATE services SET license_key = 'lb_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 24) WHERE license_key IS NULL;
CREATE UNIQUE INDEX services_license_key ON services (license_key);

-- Why a job stopped (blocked or failed), as a stable code the provisioning API answers with.
ALTER TABLE jobs ADD COLUMN error_code TEXT;
