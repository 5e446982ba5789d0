import type { Forecast } from "../renewals/forecast.js";
import type { Actor } from "../vocabulary/roles.js";

/**
 * The seam where work of other branches plugs into the console (the lead wires it at the merge):
 * each is undefined until its function exists on main, and its page or slot says "not available
 * yet" meanwhile. Every entry is the same function the admin API's route calls, actor passed.
 */
export interface ConsoleSeams {
  /** Adoption (takeover-retention): the plan for a service list, applied with `apply`. POST /admin/adopt's function. */
  adopt?: (actor: Actor, params: { services: unknown[]; apply: boolean }) => Promise<{ ok: true; value: unknown } | { ok: false; status: number; message: string }>;
  /** The audit trail (operators-audit): GET /admin/audit's function. */
  audit?: (filter: { actor?: string; service_id?: string; limit: number; cursor?: string }) => Promise<{
    audit: { at: string; actor: string; action: string; service_id: string | null; job_id: number | null; outcome: string }[];
    next_cursor: string | null;
  }>;
  /** The renewals due and their cost against the balance (operators-audit): GET /admin/forecast's function. */
  forecast?: (days: number) => Promise<Forecast>;
  /** The queue's depth and the oldest due job's wait (scale-reads): GET /admin/queue's function. */
  queueLag?: () => Promise<{ depth: number; oldest_due_seconds: number | null }>;
}

