import { randomUUID } from "node:crypto";
import type { Db } from "./database.js";

/** 92 random bits: a licence key says nothing about the service and cannot be guessed. */
export function newLicenseKey(): string {
  return `lb_${randomUUID().replaceAll("-", "").slice(0, 24)}`;
}

export const SERVICE_STATUSES = ["pending", "active", "suspended", "terminated", "failed"] as const;
export type ServiceStatus = (typeof SERVICE_STATUSES)[number];

export interface ServiceRow {
  service_id: string;
  product_id: string;
  kind: "licence" | "bundle";
  type: string | null;
  bundle: string | null;
  bundle_key: string | null;
  variant: string | null;
  upstream_variant: string | null;
  ip: string;
  billing_cycle: string;
  months: number;
  status: ServiceStatus;
  customer_email: string | null;
  customer_name: string | null;
  expires_at: number | null;
  paid_until: number | null;
  ip_changes: number;
  companions: string;
  last_error: string | null;
  /** The event of the order that last (re)created the service; null for rows older than migration 4. */
  order_event_id: string | null;
  /** The provisioning API's stable name of the licence (`lb_...`). */
  license_key: string;
  created_at: number;
  updated_at: number;
}

export type NewService = Omit<
  ServiceRow,
  "created_at" | "updated_at" | "ip_changes" | "companions" | "last_error" | "bundle_key" | "upstream_variant" | "expires_at" | "order_event_id" | "license_key"
> & {
  order_event_id?: string | null;
  expires_at?: number | null;
};

export interface HistoryRow {
  id: number;
  service_id: string;
  at: number;
  event_id: string | null;
  job_id: number | null;
  action: string;
  detail: string | null;
}

type Patch = Partial<Omit<ServiceRow, "service_id" | "created_at" | "updated_at">>;

/** The licence rows and their history. Synchronous: callers wrap several calls in one transaction. */
export class ServiceStore {
  private readonly s;
  private readonly updates = new Map<string, ReturnType<Db["prepare"]>>();

  constructor(private readonly db: Db) {
    this.s = {
      get: db.prepare("SELECT * FROM services WHERE service_id = ?"),
      byLicenseKey: db.prepare("SELECT * FROM services WHERE license_key = ?"),
      insert: db.prepare(
        `INSERT INTO services (service_id, product_id, kind, type, bundle, variant, ip, billing_cycle, months, status,
           customer_email, customer_name, expires_at, paid_until, order_event_id, license_key, created_at, updated_at)
         VALUES (@service_id, @product_id, @kind, @type, @bundle, @variant, @ip, @billing_cycle, @months, @status,
           @customer_email, @customer_name, @expires_at, @paid_until, @order_event_id, @license_key, @now, @now)`,
      ),
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
      // Services other than @except that hold @ip now, or will once a queued IP change is applied.
      holders: db.prepare(
        `SELECT * FROM services WHERE ip = @ip AND service_id <> @except AND status <> 'terminated'
         UNION
         SELECT s.* FROM jobs j JOIN services s ON s.service_id = j.service_id
         WHERE j.kind = 'change_ip' AND j.state IN ('queued', 'running', 'blocked')
           AND json_extract(j.payload, '$.ip') = @ip AND s.service_id <> @except AND s.status <> 'terminated'`,
      ),
      byStatus: db.prepare("SELECT * FROM services WHERE status = ? ORDER BY service_id LIMIT ?"),
      all: db.prepare("SELECT * FROM services ORDER BY service_id LIMIT ?"),
    };
  }

  get(serviceId: string): ServiceRow | undefined {
    return this.s.get.get(serviceId) as ServiceRow | undefined;
  }

  byLicenseKey(key: string): ServiceRow | undefined {
    return this.s.byLicenseKey.get(key) as ServiceRow | undefined;
  }

  insert(row: NewService, now: number): void {
    this.s.insert.run({ ...row, expires_at: row.expires_at ?? null, order_event_id: row.order_event_id ?? null, license_key: newLicenseKey(), now });
  }

  /** Updates the named columns only. */
  update(serviceId: string, patch: Patch, now: number): void {
    const keys = Object.keys(patch).filter((k) => (patch as Record<string, unknown>)[k] !== undefined);
    if (keys.length === 0) return;
    const cacheKey = keys.join(",");
    let stmt = this.updates.get(cacheKey);
    if (!stmt) {
      const sql = `UPDATE services SET ${keys.map((k) => `${k} = @${k}`).join(", ")}, updated_at = @updated_at WHERE service_id = @service_id`;
      stmt = this.db.prepare(sql);
      this.updates.set(cacheKey, stmt);
    }
    stmt.run({ ...Object.fromEntries(keys.map((k) => [k, (patch as Record<string, unknown>)[k]])), service_id: serviceId, updated_at: now });
  }

  addHistory(entry: Omit<HistoryRow, "id" | "event_id" | "job_id" | "detail"> & Partial<Pick<HistoryRow, "event_id" | "job_id" | "detail">>): void {
    this.s.history.run({ event_id: null, job_id: null, detail: null, ...entry });
  }

  history(serviceId: string): HistoryRow[] {
    return this.s.historyOf.all({ id: serviceId }) as HistoryRow[];
  }

  /**
   * The services, other than `except`, that hold a licence at `ip` (not terminated), or will once
   * an IP change queued for them is applied. `ip` must be canonical.
   */
  holdersOf(ip: string, except: string): ServiceRow[] {
    return this.s.holders.all({ ip, except }) as ServiceRow[];
  }

  list(status?: ServiceStatus, limit = 10_000): ServiceRow[] {
    return (status ? this.s.byStatus.all(status, limit) : this.s.all.all(limit)) as ServiceRow[];
  }
}
