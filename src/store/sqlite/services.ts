import type { Clock } from "../../clock.js";
import { DEFAULT_PROVIDER } from "../../vocabulary/provider-names.js";
import { newLicenseKey } from "../ids.js";
import { ipChangesResetHistory, refusedAsChanged } from "../operator-records.js";
import type { AuditDraft } from "../ports/audit.js";
import type { HistoryRow, OperatorJobRequest, OperatorJobResult, ServiceOps } from "../ports/services.js";
import type { NewHistory, NewService, ServiceChange, ServicePatch } from "../ports/writes.js";
import type { ServiceRow } from "../service-row.js";
import { REMOVAL_PENDING_STATES, asRemovalHolder, type RemovingRow } from "../removal-holders.js";
import type { Db } from "./database.js";
import type { SqliteJobs } from "./jobs.js";
import type { SqliteListings } from "./listings.js";
import type { SqliteAudit } from "./audit.js";
import { sqliteExport } from "./export.js";

/** The licence rows, their history and the events' outcomes, on SQLite. */
export function sqliteServices(db: Db, clock: Clock, jobs: SqliteJobs, listings: SqliteListings, audit: SqliteAudit) {
  const updates = new Map<string, ReturnType<Db["prepare"]>>();
  const s = {
    get: db.prepare("SELECT * FROM services WHERE service_id = ?"),
    byLicenseKey: db.prepare("SELECT * FROM services WHERE license_key = ?"),
    history: db.prepare(
      "INSERT INTO history (service_id, at, event_id, job_id, action, detail) VALUES (@service_id, @at, @event_id, @job_id, @action, @detail)",
    ),
    // Received events are their own history entries (the events table), so intake writes one
    // row less per event; what came of them is in history.
    historyOf: db.prepare(
      `SELECT id, service_id, at, event_id, job_id, action, detail FROM (
         SELECT 0 AS src, rowid AS id, service_id, received_at AS at, id AS event_id, NULL AS job_id,
                'received ' || type AS action, detail FROM events WHERE service_id = @id
         UNION ALL
         SELECT 1 AS src, id, service_id, at, event_id, job_id, action, detail FROM history WHERE service_id = @id)
       ORDER BY at, src, id`,
    ),
    // Services other than @except that hold @ip now, or will once a queued IP change is applied
    // (with `removing`, the holders the one-licence rule counts: removal-holders.ts).
    holders: db.prepare(
      `SELECT * FROM services WHERE ip = @ip AND service_id <> @except AND status <> 'terminated'
       UNION
       SELECT s.* FROM jobs j JOIN services s ON s.service_id = j.service_id
       WHERE j.kind = 'change_ip' AND j.state IN ('queued', 'running', 'blocked')
         AND json_extract(j.payload, '$.ip') = @ip AND s.service_id <> @except AND s.status <> 'terminated'`,
    ),
    // Services other than @except whose change has still to remove a licence it replaced at @ip.
    removing: db.prepare(
      `SELECT s.*, json_extract(r.value, '$.sku') AS removing_sku
       FROM jobs j JOIN services s ON s.service_id = j.service_id, json_each(j.intent, '$.replaced') r
       WHERE j.kind IN ('change_ip', 'change_product') AND j.state IN ${REMOVAL_PENDING_STATES} AND j.intent IS NOT NULL
         AND json_extract(r.value, '$.ip') = @ip AND s.service_id <> @except AND s.status <> 'terminated'`,
    ),
    byStatus: db.prepare("SELECT * FROM services WHERE status = ? ORDER BY service_id LIMIT ?"),
    all: db.prepare("SELECT * FROM services ORDER BY service_id LIMIT ?"),
    eventOutcome: db.prepare("UPDATE events SET outcome = ?, detail = ? WHERE id = ?"),
    mailSent: db.prepare("UPDATE mails SET state = 'sent', sent_at = ?, last_error = NULL WHERE mail_key = ?"),
    noteModule: db.prepare("UPDATE services SET module = @module WHERE service_id = @id AND module IS NOT @module"),
    modules: db.prepare("SELECT module, count(*) AS services FROM services WHERE module IS NOT NULL GROUP BY module ORDER BY module"),
  };

  // Prepared on first use: a store opened on a database not yet at migration 016 (the migration
  // tests') must still open, and has no provider, sku or upstream_id for it to name.
  let insertStatement: ReturnType<Db["prepare"]> | undefined;
  const insertService = () =>
    (insertStatement ??= db.prepare(
      `INSERT INTO services (service_id, product_id, kind, type, bundle, variant, ip, billing_cycle, months, status,
         customer_email, customer_name, expires_at, paid_until, order_event_id, license_key, provider, sku, upstream_id, created_at, updated_at)
       VALUES (@service_id, @product_id, @kind, @type, @bundle, @variant, @ip, @billing_cycle, @months, @status,
         @customer_email, @customer_name, @expires_at, @paid_until, @order_event_id, @license_key, @provider, @sku, @upstream_id, @now, @now)`,
    ));

  // Prepared on first use too: it names provider and sku.
  let holdingLicenceStatement: ReturnType<Db["prepare"]> | undefined;
  const holdingLicence = () =>
    (holdingLicenceStatement ??= db.prepare(
      "SELECT * FROM services WHERE ip = @ip AND provider = @provider AND sku = @sku AND service_id <> @except AND status <> 'terminated' ORDER BY service_id",
    ));

  const get = (id: string) => s.get.get(id) as ServiceRow | undefined;

  /** Updates the named columns only; one prepared statement per set of columns. */
  const update = (serviceId: string, patch: ServicePatch, now: number) => {
    const keys = Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined);
    if (keys.length === 0) return;
    const cacheKey = keys.join(",");
    let stmt = updates.get(cacheKey);
    if (!stmt) {
      stmt = db.prepare(`UPDATE services SET ${keys.map((k) => `${k} = @${k}`).join(", ")}, updated_at = @updated_at WHERE service_id = @service_id`);
      updates.set(cacheKey, stmt);
    }
    stmt.run({ ...Object.fromEntries(keys.map((k) => [k, (patch as Record<string, unknown>)[k]])), service_id: serviceId, updated_at: now });
  };

  const insert = (row: NewService & { service_id: string }, now: number) => {
    insertService().run({
      ...row,
      expires_at: row.expires_at ?? null,
      order_event_id: row.order_event_id ?? null,
      provider: row.provider ?? DEFAULT_PROVIDER,
      sku: row.sku ?? null,
      upstream_id: row.upstream_id ?? null,
      license_key: newLicenseKey(now),
      now,
    });
  };

  const addHistory = (serviceId: string, h: NewHistory, at: number) =>
    s.history.run({ service_id: serviceId, at, event_id: h.event_id ?? null, job_id: h.job_id ?? null, action: h.action, detail: h.detail ?? null });

  const change = db.transaction((c: ServiceChange): { applied: boolean; jobIds: number[] } => {
    const now = clock.now();
    if (c.ifUpdatedAt !== undefined && get(c.serviceId)?.updated_at !== c.ifUpdatedAt) {
      // The operator's action did not happen: that is recorded, and nothing else.
      audit.forChangeSync(refusedAsChanged(c.audit), c.serviceId, "refused", null, now);
      return { applied: false, jobIds: [] };
    }
    if (c.patch) update(c.serviceId, c.patch, now);
    for (const h of c.history ?? []) addHistory(c.serviceId, h, now);
    if (c.event?.id) s.eventOutcome.run(c.event.outcome, c.event.detail, c.event.id);
    if (c.mailSent) s.mailSent.run(now, c.mailSent);
    const jobIds = (c.enqueue ?? []).map((j) => jobs.enqueueSync(j).id);
    audit.forChangeSync(c.audit ?? [], c.serviceId, "ok", jobIds[0] ?? null, now);
    return { applied: true, jobIds };
  });

  /**
   * An operator's action refused for a service the bridge does not know: only that is written,
   * without the id, which may be anything a client typed (a token pasted in the wrong place).
   */
  const unknownService = (draft: AuditDraft, now: number) =>
    audit.insertSync({ ...draft, service_id: null, outcome: "refused", detail: draft.detail ? `${draft.detail}; no such service` : "no such service" }, now);

  const resetIpChanges = db.transaction((serviceId: string, draft: AuditDraft): ServiceRow | undefined => {
    const now = clock.now();
    const svc = get(serviceId);
    if (!svc) {
      unknownService(draft, now);
      return undefined;
    }
    update(serviceId, { ip_changes: 0 }, now);
    addHistory(serviceId, ipChangesResetHistory(draft.actor, svc.ip_changes), now);
    audit.insertSync({ ...draft, service_id: serviceId, outcome: "ok" }, now);
    return get(serviceId);
  });

  // The refusal passes through as it came: the caller's type is restored at the boundary below.
  const queueForOperator = db.transaction((serviceId: string, r: OperatorJobRequest<{ message: string }>): OperatorJobResult<{ message: string }> => {
    const now = clock.now();
    const svc = get(serviceId);
    if (!svc) {
      unknownService(r.audit, now);
      return { status: "unknown_service" };
    }
    const refusal = r.refuse(svc);
    if (refusal) {
      audit.insertSync({ ...r.audit, service_id: serviceId, outcome: "refused", detail: r.audit.detail ? `${r.audit.detail}; ${refusal.message}` : refusal.message }, now);
      return { status: "refused", refusal };
    }
    const { id, created } = jobs.enqueueSync(r.job);
    if (created) {
      addHistory(serviceId, { ...r.history, job_id: id }, now);
      audit.insertSync({ ...r.audit, service_id: serviceId, job_id: id, outcome: "ok" }, now);
    }
    return { status: "queued", jobId: id, created, service: svc };
  });

  const ops: ServiceOps = {
    async get(id) {
      return get(id);
    },
    async byLicenseKey(key) {
      return s.byLicenseKey.get(key) as ServiceRow | undefined;
    },
    async list(status, limit = Number.MAX_SAFE_INTEGER) {
      return (status ? s.byStatus.all(status, limit) : s.all.all(limit)) as ServiceRow[];
    },
    async history(id) {
      return s.historyOf.all({ id }) as HistoryRow[];
    },
    async page(query) {
      return listings.licenses(query);
    },
    exportChunks: sqliteExport(db, listings),
    async briefs(after, limit) {
      return listings.briefs(after, limit);
    },
    async byLicenceId(provider, upstreamId) {
      return listings.licenceHolders(provider, upstreamId);
    },
    async holdingLicence(provider, ip, sku, except) {
      return holdingLicence().all({ provider, ip, sku, except }) as ServiceRow[];
    },
    async historyPage(id, page) {
      return listings.history(id, page);
    },
    async busy(kinds) {
      if (kinds.length === 0) return new Set();
      const rows = db
        .prepare(
          `SELECT DISTINCT service_id FROM jobs
           WHERE state IN ('queued', 'running') AND service_id IS NOT NULL AND kind IN (${kinds.map(() => "?").join(", ")})`,
        )
        .all(...kinds) as { service_id: string }[];
      return new Set(rows.map((r) => r.service_id));
    },
    async change(c) {
      return change.immediate(c);
    },
    async resetIpChanges(serviceId, draft) {
      return resetIpChanges.immediate(serviceId, draft);
    },
    async queueForOperator<R extends { message: string }>(serviceId: string, request: OperatorJobRequest<R>) {
      return queueForOperator.immediate(serviceId, request) as OperatorJobResult<R>;
    },
    async noteModule(id, module) {
      s.noteModule.run({ id, module });
    },
    async modules() {
      return s.modules.all() as { module: string; services: number }[];
    },
  };
  return Object.assign(ops, {
    getSync: get,
    changeSync: change,
    insertSync: insert,
    updateSync: update,
    addHistorySync: addHistory,
    holdersSync: (ip: string, except: string): ServiceRow[] => [
      ...(s.holders.all({ ip, except }) as ServiceRow[]),
      ...(s.removing.all({ ip, except }) as RemovingRow[]).map((r) => asRemovalHolder(r, ip)),
    ],
  });
}

export type SqliteServices = ReturnType<typeof sqliteServices>;
