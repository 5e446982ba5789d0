// The durable baseline of the ingest bench (issue 24): the least a durable, verified intake must
// do, written here on its own (nothing from src/ or dist/), so the bridge's intake can be measured
// against it. Per delivery: the raw body (64 KiB), the Standard Webhooks signature (HMAC-SHA256
// over `id.timestamp.body` with the base64-decoded secret, a five-minute timestamp window, every
// `v1,` entry compared in constant time), JSON, the fields of a BillingEvent checked by hand, then
// one `events` row and one `jobs` row in a group-committed transaction, the WAL fsynced before the
// 202: the bridge's own discipline (src/store/sqlite/database.ts, group-commit.ts, wal-sync.ts:
// WAL with synchronous=NORMAL, the writes of one event-loop turn in one transaction, one group in
// flight, the fsync of the WAL on libuv's thread pool before any answer). A repeated webhook-id
// (unique on source and webhook_id) is answered 200 duplicate, as the bridge does.
import { Buffer } from "node:buffer";
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { open } from "node:fs/promises";
import { isIP } from "node:net";
import { setImmediate } from "node:timers";
import Database from "better-sqlite3";
import express from "express";

const TOLERANCE_SECONDS = 5 * 60;
const MAX_BYTES = 64 * 1024;
const EVENT_TYPES = new Set(["service.created", "service.renewed", "service.suspended", "service.unsuspended", "service.terminated", "service.ip_changed", "service.product_changed"]);
const CYCLES = new Set(["monthly", "quarterly", "semiannually", "annually", "biennially", "triennially"]);
const ID = /^[\w.:-]{1,64}$/;
const EMAIL = /^[^\s@"<>()[\],;:\\]{1,64}@[a-z0-9-]+(\.[a-z0-9-]+)+$/i;
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

// The bridge's events and jobs tables (migrations/sqlite), columns and indexes alike, so the rows
// cost what the bridge's cost; nothing else (no services, no history).
const SCHEMA = `
CREATE TABLE events (
  id TEXT PRIMARY KEY, source TEXT NOT NULL, webhook_id TEXT NOT NULL, type TEXT NOT NULL,
  service_id TEXT NOT NULL, payload TEXT NOT NULL, received_at INTEGER NOT NULL, outcome TEXT, detail TEXT,
  UNIQUE (source, webhook_id));
CREATE INDEX events_service ON events (service_id, received_at);
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, queue_key TEXT, service_id TEXT, event_id TEXT,
  unique_key TEXT UNIQUE, payload TEXT NOT NULL DEFAULT '{}',
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'blocked')),
  attempts INTEGER NOT NULL DEFAULT 0, max_attempts INTEGER NOT NULL, run_at INTEGER NOT NULL,
  lease_until INTEGER, leased_by TEXT, intent TEXT, last_error TEXT, created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL, error_code TEXT, skipped TEXT);
CREATE INDEX jobs_runnable ON jobs (state, run_at);
CREATE INDEX jobs_queue ON jobs (queue_key, id) WHERE queue_key IS NOT NULL;
CREATE INDEX jobs_service ON jobs (service_id, id);
CREATE INDEX jobs_change_ip_target ON jobs (json_extract(payload, '$.ip'))
  WHERE kind = 'change_ip' AND state IN ('queued', 'running', 'blocked');
`;

/** The Standard Webhooks check on the raw bytes; the problem, or undefined when the delivery is signed. */
export function verify(key, id, timestamp, signature, body, nowMs) {
  if (!id || !timestamp || !signature) return "Missing required headers";
  if (id.length > 256) return "webhook-id is longer than 256 characters";
  if (!/^\d{1,15}$/.test(timestamp)) return "Invalid timestamp";
  const skew = Math.floor(nowMs / 1000) - Number(timestamp);
  if (skew > TOLERANCE_SECONDS) return "Message timestamp too old";
  if (-skew > TOLERANCE_SECONDS) return "Message timestamp too new";
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest();
  for (const entry of signature.split(" ")) {
    if (!entry.startsWith("v1,")) continue;
    const given = Buffer.from(entry.slice(3), "base64");
    if (given.length === expected.length && timingSafeEqual(given, expected)) return undefined;
  }
  return "No matching signature found";
}

const isId = (v) => (typeof v === "string" && ID.test(v.trim())) || (Number.isSafeInteger(v) && v >= 0);

/** The fields of a BillingEvent, by hand: { path: message } for each problem. */
export function fieldProblems(e) {
  const problems = {};
  if (e === null || typeof e !== "object" || Array.isArray(e)) return { "": "must be a JSON object" };
  if (!EVENT_TYPES.has(e.type)) problems.type = "is not an event type";
  const s = e.service;
  if (s === null || typeof s !== "object") return { ...problems, service: "is required" };
  if (!isId(s.id)) problems["service.id"] = "must be a non-empty string id";
  const created = e.type === "service.created";
  if (s.product_id !== undefined ? !isId(s.product_id) : created) problems["service.product_id"] = "is required";
  if (s.billing_cycle !== undefined ? !CYCLES.has(s.billing_cycle) : created) problems["service.billing_cycle"] = "is not a billing cycle";
  if (s.ip !== undefined ? typeof s.ip !== "string" || isIP(s.ip) === 0 : created) problems["service.ip"] = "must be an IPv4 or IPv6 address";
  const c = s.customer;
  if (c !== undefined && (c === null || typeof c !== "object")) problems["service.customer"] = "must be an object";
  else if (c?.email !== undefined ? typeof c.email !== "string" || c.email.length > 254 || !EMAIL.test(c.email) : created) problems["service.customer.email"] = "must be an e-mail address";
  if (c?.name !== undefined && (typeof c.name !== "string" || c.name.length > 200 || CONTROL.test(c.name))) problems["service.customer.name"] = "must be printable text";
  return problems;
}

/**
 * The durable write on a fresh database at `path` (which must not exist yet): `commit(delivery)`
 * resolves with `{ eventId, duplicate }` once the delivery's rows are committed and on disk.
 */
export function durableWriter(path) {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("temp_store = MEMORY");
  db.exec(SCHEMA);
  const insertEvent = db.prepare(
    `INSERT INTO events (id, source, webhook_id, type, service_id, payload, received_at)
     VALUES (?, 'billing', ?, ?, ?, ?, ?) ON CONFLICT (source, webhook_id) DO NOTHING`,
  );
  const findEvent = db.prepare("SELECT id FROM events WHERE source = 'billing' AND webhook_id = ?");
  const insertJob = db.prepare(
    `INSERT INTO jobs (kind, queue_key, service_id, event_id, payload, state, max_attempts, run_at, created_at, updated_at)
     VALUES (?, ?, ?, ?, '{}', 'queued', 8, ?, ?, ?)`,
  );

  /** One delivery's rows: { eventId, duplicate }. */
  const write = ({ webhookId, type, serviceId, payload }) => {
    const now = Date.now();
    const eventId = `evt_${now.toString(36)}${randomUUID().slice(0, 13).replace("-", "")}`;
    if (insertEvent.run(eventId, webhookId, type, serviceId, payload, now).changes === 0) return { eventId: findEvent.get(webhookId).id, duplicate: true };
    insertJob.run(type === "service.created" ? "register" : type.slice(8), `service:${serviceId}`, serviceId, eventId, now, now, now);
    return { eventId, duplicate: false };
  };
  const writeAll = db.transaction((batch) => batch.map((d) => write(d)));

  // Group commit: the deliveries of one event-loop turn in one transaction; one group in flight,
  // the next one made of what came during its fsync.
  const wal = open(`${path}-wal`, "r");
  let pending = [];
  let scheduled = false;
  let flushing = false;
  const flush = async () => {
    scheduled = false;
    if (flushing) return;
    flushing = true;
    try {
      while (pending.length > 0) {
        const batch = pending;
        pending = [];
        let results;
        try {
          results = writeAll.immediate(batch.map((p) => p.delivery));
          await (await wal).sync();
        } catch (error) {
          for (const p of batch) p.reject(error);
          continue;
        }
        batch.forEach((p, i) => p.resolve(results[i]));
      }
    } finally {
      flushing = false;
    }
  };
  return {
    commit: (delivery) =>
      new Promise((resolve, reject) => {
        pending.push({ delivery, resolve, reject });
        if (!scheduled && !flushing) {
          scheduled = true;
          setImmediate(flush);
        }
      }),
    // After the writes under way: a delivery still in flight when the server stops is committed first.
    close: async () => {
      while (pending.length > 0 || flushing) await new Promise((r) => setImmediate(r));
      await (await wal).close();
      db.close();
    },
  };
}

/** The baseline's app on a fresh database at `path` (which must not exist yet). */
export function durableBaseline({ secret, path }) {
  const key = Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64");
  const { commit, close } = durableWriter(path);
  const app = express();
  app.post("/webhooks/billing", express.raw({ type: () => true, limit: MAX_BYTES }), async (req, res, next) => {
    try {
      const type = (req.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
      if (type !== "application/json") return res.status(415).json({ error: "unsupported_media_type" });
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const webhookId = req.headers["webhook-id"];
      const denied = verify(key, webhookId, req.headers["webhook-timestamp"], req.headers["webhook-signature"], body, Date.now());
      if (denied) return res.status(401).json({ error: "unauthorized", message: denied });
      const text = body.toString("utf8");
      let event;
      try {
        event = JSON.parse(text);
      } catch {
        return res.status(400).json({ error: "bad_json" });
      }
      const problems = fieldProblems(event);
      if (Object.keys(problems).length > 0) return res.status(422).json({ error: "validation", errors: problems });
      const r = await commit({ webhookId, type: event.type, serviceId: String(event.service.id).trim(), payload: text });
      return res.status(r.duplicate ? 200 : 202).json({ event_id: r.eventId, status: r.duplicate ? "duplicate" : "accepted" });
    } catch (err) {
      return next(err);
    }
  });
  return { app, close };
}
