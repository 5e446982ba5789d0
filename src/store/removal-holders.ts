import type { ServiceRow } from "./service-row.js";

/** A service's row beside one licence its change has still to remove (`removing_sku`, at the IP asked about). */
export type RemovingRow = ServiceRow & { removing_sku: string };

/**
 * A service whose change bought the licence that replaces one and has not yet removed the old
 * (CLN's register-then-remove, its removal refused or not yet made) still holds the old licence
 * at its IP: for "one licence, one service" it is that service's until removed, or an order there
 * would get it (CLN's register answering it held, nothing billed) and the change's retry remove
 * it. Its row as the rule compares it: at `ip`, of the SKU left to remove.
 */
export function asRemovalHolder({ removing_sku, ...row }: RemovingRow, ip: string): ServiceRow {
  return { ...row, ip, sku: removing_sku };
}

/** The job states whose intent may still list licences to remove: unfinished, or stopped for a person. */
export const REMOVAL_PENDING_STATES = "('queued', 'running', 'blocked', 'failed')";
