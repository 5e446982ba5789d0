-- One licence belongs to one service, also by the provider's own id of it (issue 36): Manage2
-- suspends by expiring a licence and unsuspends by reactivating that same licence by its id, then
-- moves it to where the service went meanwhile. So a suspended service's licence may sit expired
-- at an IP its row no longer names, and the (provider, IP, what is bought) rule does not see it.
-- Before a licence found at an IP is adopted or reactivated for a service, the services recording
-- its id are read through this index (a handful, normally none), in service id order. Partial:
-- most rows (the reseller's, CLN's) record no id.
CREATE INDEX services_upstream_id ON services (provider, upstream_id, service_id) WHERE upstream_id IS NOT NULL;
