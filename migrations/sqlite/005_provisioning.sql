-- The provisioning API names a licence by a key of its own, stable for the life of the service
-- (panel modules store it and pass it back on every later call).
ALTER TABLE services ADD COLUMN license_key TEXT;
UPDATE services SET license_key = 'lb_' || lower(hex(randomblob(12))) WHERE license_key IS NULL;
CREATE UNIQUE INDEX services_license_key ON services (license_key);

-- Why a job stopped (blocked or failed), as a stable code the provisioning API answers with.
ALTER TABLE jobs ADD COLUMN error_code TEXT;
