import type { ProviderName } from "../vocabulary/provider-names.js";
import type { ServiceStatus } from "../vocabulary/service-statuses.js";

/** A service's row: its licence as the bridge keeps it. */
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
  /** The panel module that last called about it, `panel/version` from its User-Agent; null if none has. */
  module: string | null;
  /** Who sold the licence (migration 16; every older row is the reseller's). */
  provider: ProviderName;
  /**
   * What the provider sold, in its own terms: Manage2's package id, CLN's type number. Null for
   * the reseller, whose `type` or `bundle` is what it sells.
   */
  sku: string | null;
  /** The provider's own id of the licence (Manage2's licenseid); null where it has none, or none is known yet. */
  upstream_id: string | null;
  created_at: number;
  updated_at: number;
}

const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

/**
 * A service's licence as the admin API, the console and the CLI show it. Beside the row rather
 * than with the other views (src/admin/views.ts re-exports it) because the SQLite export writes
 * it in a worker thread of the store's own (sqlite/export-worker.ts), which imports nothing above
 * the store.
 */
export function licenseView(s: ServiceRow) {
  return {
    service_id: s.service_id,
    product_id: s.product_id,
    provider: s.provider,
    ip: s.ip,
    type: s.type,
    variant: s.variant,
    bundle: s.bundle,
    bundle_key: s.bundle_key,
    status: s.status,
    billing_cycle: s.billing_cycle,
    expires_at: iso(s.expires_at),
    paid_until: iso(s.paid_until),
    companions: JSON.parse(s.companions) as string[],
    ip_changes: s.ip_changes,
    customer: { email: s.customer_email, name: s.customer_name },
    last_error: s.last_error,
    module: s.module,
    created_at: iso(s.created_at),
    updated_at: iso(s.updated_at),
  };
}

/** Licences as NDJSON: each one's view on a line of its own, every line ended by "\n". */
export function licenseLines(rows: readonly ServiceRow[]): string {
  let lines = "";
  for (const row of rows) lines += `${JSON.stringify(licenseView(row))}\n`;
  return lines;
}
