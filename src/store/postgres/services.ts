import { DEFAULT_PROVIDER } from "../../vocabulary/provider-names.js";
import { newLicenseKey } from "../ids.js";
import { exportByPages } from "../license-export.js";
import { ipChangesResetHistory, refusedAsChanged } from "../operator-records.js";
import type { AuditDraft } from "../ports/audit.js";
import type { HistoryRow, OperatorJobRequest, OperatorJobResult, ServiceOps } from "../ports/services.js";
import type { NewHistory, NewService, ServiceChange, ServicePatch } from "../ports/writes.js";
import type { ServiceRow } from "../service-row.js";
import { REMOVAL_PENDING_STATES, asRemovalHolder, type RemovingRow } from "../removal-holders.js";
import { queueLock, type PgDb, type Tx } from "./database.js";
import type { PgJobs } from "./jobs.js";
import type { PgListings } from "./listings.js";
import type { PgAudit } from "./audit.js";

/** The columns a patch may name: the SQL is built from these, never from whatever keys an object has. */
const PATCHABLE = new Set<string>([
  "product_id",
  "kind",
  "type",
  "bundle",
  "bundle_key",
  "variant",
  "upstream_variant",
  "ip",
  "billing_cycle",
  "months",
  "status",
  "customer_email",
  "customer_name",
  "expires_at",
  "paid_until",
  "ip_changes",
  "companions",
  "last_error",
  "order_event_id",
  "provider",
  "sku",
  "upstream_id",
]);

/** The licence rows, their history and the events' outcomes, on PostgreSQL. */
export function pgServices(db: PgDb, jobs: PgJobs, listings: PgListings, audit: PgAudit) {
  /** Updates the named columns only, inside the caller's transaction. */
  const update = async (t: Tx, serviceId: string, patch: ServicePatch, now: number) => {
    const entries = Object.entries(patch).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return;
    for (const [k] of entries) if (!PATCHABLE.has(k)) throw new Error(`services: no column "${k}" may be patched`);
    const sets = entries.map(([k], i) => `${k} = $${i + 3}`);
    await t.q(`UPDATE services SET ${sets.join(", ")}, updated_at = $2 WHERE service_id = $1`, [serviceId, now, ...entries.map(([, v]) => v)]);
  };

  const insert = async (t: Tx, row: NewService & { service_id: string }, now: number) => {
    await t.q(
      `INSERT INTO services (service_id, product_id, kind, type, bundle, variant, ip, billing_cycle, months, status,
         customer_email, customer_name, expires_at, paid_until, order_event_id, license_key, provider, sku, upstream_id, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $20)`,
      [
        row.service_id,
        row.product_id,
        row.kind,
        row.type,
        row.bundle,
        row.variant,
        row.ip,
        row.billing_cycle,
        row.months,
        row.status,
        row.customer_email,
        row.customer_name,
        row.expires_at ?? null,
        row.paid_until,
        row.order_event_id ?? null,
        newLicenseKey(now),
        row.provider ?? DEFAULT_PROVIDER,
        row.sku ?? null,
        row.upstream_id ?? null,
        now,
      ],
    );
  };

  const addHistory = async (t: Tx, serviceId: string, entries: readonly NewHistory[], at: number) => {
    if (entries.length === 0) return;
    // One statement; unnest keeps the given order, so the ids (and the history) do too.
    await t.q(
      `INSERT INTO history (service_id, at, event_id, job_id, action, detail)
       SELECT $1, $2, event_id, job_id, action, detail FROM unnest($3::text[], $4::bigint[], $5::text[], $6::text[]) AS h(event_id, job_id, action, detail)`,
      [serviceId, at, entries.map((h) => h.event_id ?? null), entries.map((h) => h.job_id ?? null), entries.map((h) => h.action), entries.map((h) => h.detail ?? null)],
    );
  };

  /**
   * Services other than `except` that hold `ip` now, or will once a queued IP change is applied,
   * or have still to remove a licence their change replaced there (removal-holders.ts).
   */
  const holders = async (t: Pick<Tx, "q">, ip: string, except: string): Promise<ServiceRow[]> => [
    ...(await holding(t, ip, except)),
    ...(await removing(t, ip, except)).map((r) => asRemovalHolder(r, ip)),
  ];
  /** Services other than `except` whose change has still to remove a licence it replaced at `ip`. */
  const removing = async (t: Pick<Tx, "q">, ip: string, except: string) =>
    t.q<RemovingRow>(
      `SELECT s.*, r.value ->> 'sku' AS removing_sku
       FROM jobs j JOIN services s ON s.service_id = j.service_id
       CROSS JOIN LATERAL jsonb_array_elements(j.intent::jsonb -> 'replaced') AS r(value)
       WHERE j.kind IN ('change_ip', 'change_product') AND j.state IN ${REMOVAL_PENDING_STATES} AND j.intent IS NOT NULL
         AND r.value ->> 'ip' = $1 AND s.service_id <> $2 AND s.status <> 'terminated'
       ORDER BY s.service_id`,
      [ip, except],
    );
  const holding = async (t: Pick<Tx, "q">, ip: string, except: string) =>
    t.q<ServiceRow>(
      `SELECT * FROM services WHERE ip = $1 AND service_id <> $2 AND status <> 'terminated'
       UNION
       SELECT s.* FROM jobs j JOIN services s ON s.service_id = j.service_id
       WHERE j.kind = 'change_ip' AND j.state IN ('queued', 'running', 'blocked')
         AND (j.payload::jsonb ->> 'ip') = $1 AND s.service_id <> $2 AND s.status <> 'terminated'
       ORDER BY service_id`,
      [ip, except],
    );

  const ops: ServiceOps = {
    async get(id) {
      return (await db.q<ServiceRow>("SELECT * FROM services WHERE service_id = $1", [id]))[0];
    },
    async byLicenseKey(key) {
      return (await db.q<ServiceRow>("SELECT * FROM services WHERE license_key = $1", [key]))[0];
    },
    async noteModule(id, module) {
      await db.run("UPDATE services SET module = $2 WHERE service_id = $1 AND module IS DISTINCT FROM $2", [id, module]);
    },
    async modules() {
      const rows = await db.q<{ module: string; services: string | number }>(
        "SELECT module, count(*) AS services FROM services WHERE module IS NOT NULL GROUP BY module ORDER BY module",
      );
      return rows.map((r) => ({ module: r.module, services: Number(r.services) }));
    },
    async page(query) {
      return listings.licenses(query);
    },
    // No worker here: the reads are network I/O already, and what a page costs the loop (parsing
    // 100 rows, their JSON) is bounded by the page, with a turn between two.
    exportChunks(filter) {
      return exportByPages(filter, listings.licenses);
    },
    async briefs(after, limit) {
      return listings.briefs(after, limit);
    },
    async byLicenceId(provider, upstreamId) {
      return listings.licenceHolders(provider, upstreamId);
    },
    async holdingLicence(provider, ip, sku, except) {
      return db.q<ServiceRow>(
        "SELECT * FROM services WHERE ip = $1 AND provider = $2 AND sku = $3 AND service_id <> $4 AND status <> 'terminated' ORDER BY service_id",
        [ip, provider, sku, except],
      );
    },
    async historyPage(id, page) {
      return listings.history(id, page);
    },
    async list(status, limit = Number.MAX_SAFE_INTEGER) {
      // service_id is COLLATE "C": the byte order SQLite lists them in.
      return status
        ? db.q<ServiceRow>("SELECT * FROM services WHERE status = $1 ORDER BY service_id LIMIT $2", [status, limit])
        : db.q<ServiceRow>("SELECT * FROM services ORDER BY service_id LIMIT $1", [limit]);
    },
    async history(id) {
      // Received events are their own history entries (the events table); seq is their order.
      return db.q<HistoryRow>(
        `SELECT id, service_id, at, event_id, job_id, action, detail FROM (
           SELECT 0 AS src, seq AS id, service_id, received_at AS at, id AS event_id, NULL::bigint AS job_id,
                  'received ' || type AS action, detail FROM events WHERE service_id = $1
           UNION ALL
           SELECT 1 AS src, id, service_id, at, event_id, job_id, action, detail FROM history WHERE service_id = $1) h
         ORDER BY at, src, id`,
        [id],
      );
    },
    async busy(kinds) {
      if (kinds.length === 0) return new Set();
      const rows = await db.q<{ service_id: string }>(
        "SELECT DISTINCT service_id FROM jobs WHERE state IN ('queued', 'running') AND service_id IS NOT NULL AND kind = ANY($1::text[])",
        [[...kinds]],
      );
      return new Set(rows.map((r) => r.service_id));
    },
    async change(c: ServiceChange) {
      return db.tx((t) => changeIn(t, c));
    },
    async resetIpChanges(serviceId, draft) {
      return db.tx(async (t) => {
        const svc = await getForUpdate(t, serviceId);
        if (!svc) {
          await unknownService(t, draft);
          return undefined;
        }
        const now = await t.now();
        await update(t, serviceId, { ip_changes: 0 }, now);
        await addHistory(t, serviceId, [ipChangesResetHistory(draft.actor, svc.ip_changes)], now);
        await audit.insertIn(t, { ...draft, service_id: serviceId, outcome: "ok" });
        return getForUpdate(t, serviceId);
      });
    },
    async queueForOperator<R extends { message: string }>(serviceId: string, r: OperatorJobRequest<R>): Promise<OperatorJobResult<R>> {
      return db.tx(async (t) => {
        // Queue locks before the row lock, in the order every transaction takes them.
        if (r.job.queueKey) await t.lock([queueLock(r.job.queueKey)]);
        const svc = await getForUpdate(t, serviceId);
        if (!svc) {
          await unknownService(t, r.audit);
          return { status: "unknown_service" };
        }
        const refusal = r.refuse(svc);
        if (refusal) {
          await audit.insertIn(t, { ...r.audit, service_id: serviceId, outcome: "refused", detail: r.audit.detail ? `${r.audit.detail}; ${refusal.message}` : refusal.message });
          return { status: "refused", refusal };
        }
        const [{ id, created }] = (await jobs.insert(t, [r.job])) as [{ id: number; created: boolean }];
        if (created) {
          await addHistory(t, serviceId, [{ ...r.history, job_id: id }], await t.now());
          await audit.insertIn(t, { ...r.audit, service_id: serviceId, job_id: id, outcome: "ok" });
        }
        return { status: "queued", jobId: id, created, service: svc };
      });
    },
  };

  /** Inside a transaction (an intake's, an operator's change): the row, locked until commit. */
  async function getForUpdate(t: Tx, id: string): Promise<ServiceRow | undefined> {
    return (await t.q<ServiceRow>("SELECT * FROM services WHERE service_id = $1 FOR UPDATE", [id]))[0];
  }

  /** An operator's action refused for a service the bridge does not know: only that is written. */
  // No id: an id no service has may be anything a client typed (a token pasted in the wrong place).
  async function unknownService(t: Tx, draft: AuditDraft): Promise<void> {
    await audit.insertIn(t, { ...draft, service_id: null, outcome: "refused", detail: draft.detail ? `${draft.detail}; no such service` : "no such service" });
  }

  /** One service change inside the caller's transaction. */
  async function changeIn(t: Tx, c: ServiceChange): Promise<{ applied: boolean; jobIds: number[] }> {
    const enqueue = c.enqueue ?? [];
    // Queue locks before the row lock, in the order every transaction takes them.
    await t.lock(enqueue.flatMap((j) => (j.queueKey ? [queueLock(j.queueKey)] : [])));
    if (c.ifUpdatedAt !== undefined) {
      // Locked until commit: a concurrent change waits and then finds the row changed.
      const [row] = await t.q<{ updated_at: number }>("SELECT updated_at FROM services WHERE service_id = $1 FOR UPDATE", [c.serviceId]);
      if (row?.updated_at !== c.ifUpdatedAt) {
        // The operator's action did not happen: that is recorded, and nothing else.
        await audit.forChangeIn(t, refusedAsChanged(c.audit), c.serviceId, "refused", null);
        return { applied: false, jobIds: [] };
      }
    }
    const now = await t.now();
    if (c.patch) await update(t, c.serviceId, c.patch, now);
    await addHistory(t, c.serviceId, c.history ?? [], now);
    if (c.event?.id) await t.q("UPDATE events SET outcome = $1, detail = $2 WHERE id = $3", [c.event.outcome, c.event.detail, c.event.id]);
    if (c.mailSent) await t.q("UPDATE mails SET state = 'sent', sent_at = $1, last_error = NULL WHERE mail_key = $2", [now, c.mailSent]);
    const jobIds = (await jobs.insert(t, enqueue)).map((r) => r.id);
    await audit.forChangeIn(t, c.audit ?? [], c.serviceId, "ok", jobIds[0] ?? null);
    return { applied: true, jobIds };
  }

  return Object.assign(ops, {
    getForUpdate,
    changeIn,
    insertIn: insert,
    updateIn: update,
    historyIn: addHistory,
    holdersIn: holders,
  });
}

export type PgServices = ReturnType<typeof pgServices>;
