-- What exactly-once needs of an event that a prune deletes (TERMINATED_RETENTION_DAYS takes a
-- terminated service's events with its other records): its (source, webhook_id), the key the
-- intake dedupes on, kept for ever here, so a delivery sent again after the prune is the
-- duplicate it was before; with the event's id, for the duplicate's answer, and its type, which
-- a panel whose event type is not signed (HostBill's HB-Event) compares with its own (409). The
-- prune writes a key in the transaction that deletes its event; the intake's insert of an event
-- checks the keys in the same statement, so a new delivery costs no statement more. No rowid: one
-- b-tree, the key itself.
CREATE TABLE webhook_keys (
  source     TEXT NOT NULL,
  webhook_id TEXT NOT NULL,
  event_id   TEXT NOT NULL,
  type       TEXT NOT NULL,
  PRIMARY KEY (source, webhook_id)
) WITHOUT ROWID;
