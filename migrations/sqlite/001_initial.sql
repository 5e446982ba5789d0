-- Events as received from a billing panel. (source, webhook_id) is the idempotency key:
-- a repeated delivery finds its row and creates nothing.
CREATE TABLE events (
  id          TEXT PRIMARY KEY,
  source      TEXT NOT NULL,
  webhook_id  TEXT NOT NULL,
  type        TEXT NOT NULL,
  service_id  TEXT NOT NULL,
  payload     TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  outcome     TEXT,
  detail      TEXT,
  UNIQUE (source, webhook_id)
);
CREATE INDEX events_service ON events (service_id, received_at);

-- One licence (or bundle) per billing-panel service, as the bridge believes it to be.
-- Times are Unix milliseconds.
CREATE TABLE services (
  service_id       TEXT PRIMARY KEY,
  product_id       TEXT NOT NULL,
  kind             TEXT NOT NULL CHECK (kind IN ('licence', 'bundle')),
  type             TEXT,
  bundle           TEXT,
  bundle_key       TEXT,
  variant          TEXT,
  upstream_variant TEXT,
  ip               TEXT NOT NULL,
  billing_cycle    TEXT NOT NULL,
  months           INTEGER NOT NULL,
  status           TEXT NOT NULL CHECK (status IN ('pending', 'active', 'suspended', 'terminated', 'failed')),
  customer_email   TEXT,
  customer_name    TEXT,
  expires_at       INTEGER,
  paid_until       INTEGER,
  ip_changes       INTEGER NOT NULL DEFAULT 0,
  companions       TEXT NOT NULL DEFAULT '[]',
  last_error       TEXT,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL
);
CREATE INDEX services_status ON services (status);

-- What happened to a service and why, in order.
CREATE TABLE history (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  service_id TEXT NOT NULL,
  at         INTEGER NOT NULL,
  event_id   TEXT,
  job_id     INTEGER,
  action     TEXT NOT NULL,
  detail     TEXT
);
CREATE INDEX history_service ON history (service_id, id);

-- Durable jobs. Jobs sharing a queue_key run strictly in id order (one service's events);
-- unique_key makes enqueueing idempotent (a renewal per licence and term, a mail per event).
-- intent is set just before a call that may charge money and cleared with its result, so a
-- job that finds it set knows an earlier attempt may have bought something.
CREATE TABLE jobs (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  kind         TEXT NOT NULL,
  queue_key    TEXT,
  service_id   TEXT,
  event_id     TEXT,
  unique_key   TEXT UNIQUE,
  payload      TEXT NOT NULL DEFAULT '{}',
  state        TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'blocked')),
  attempts     INTEGER NOT NULL DEFAULT 0,
  max_attempts INTEGER NOT NULL,
  run_at       INTEGER NOT NULL,
  lease_until  INTEGER,
  leased_by    TEXT,
  intent       TEXT,
  last_error   TEXT,
  created_at   INTEGER NOT NULL,
  updated_at   INTEGER NOT NULL
);
CREATE INDEX jobs_runnable ON jobs (state, run_at);
CREATE INDEX jobs_queue ON jobs (queue_key, id) WHERE queue_key IS NOT NULL;
CREATE INDEX jobs_service ON jobs (service_id, id);
