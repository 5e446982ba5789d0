-- PostgreSQL translation of migrations/sqlite/017_licence_ids.sql: the services recording a
-- provider's licence id, read before that licence is adopted or reactivated for another (see there).
CREATE INDEX services_upstream_id ON services (provider, upstream_id, service_id) WHERE upstream_id IS NOT NULL;
