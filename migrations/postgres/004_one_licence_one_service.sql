-- PostgreSQL translation of migrations/sqlite/004_one_licence_one_service.sql.
-- One licence, one service: intake looks up who holds an (IP, type) before it accepts an order
-- or an IP change, both at services' current IPs and at the targets of IP changes still queued.
-- The holders query uses the same expression, `(payload::jsonb ->> 'ip')`, to be served by it.
CREATE INDEX services_ip ON services (ip);
CREATE INDEX jobs_change_ip_target ON jobs ((payload::jsonb ->> 'ip'))
  WHERE kind = 'change_ip' AND state IN ('queued', 'running', 'blocked');

-- The event of the order that (re)created the service. A registration job of an older order
-- finds another id here and does nothing, so it neither buys nor mails.
ALTER TABLE services ADD COLUMN order_event_id TEXT;
