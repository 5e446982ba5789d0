-- The panel module (and its version) that last called the provisioning API about the service,
-- from its User-Agent ("whmcs/0.2.0"): which panel manages a licence, and whether its module is
-- older than the bridge supports.
ALTER TABLE services ADD COLUMN module TEXT;
