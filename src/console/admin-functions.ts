import { runAdoption, type AdoptionDeps } from "../adoption/adopt.js";
import { parseRows } from "../adoption/rows.js";
import { auditPage } from "../admin/audit-routes.js";
import { idCursorSchema } from "../admin/paging.js";
import { forecastRenewals, type Forecast, type ForecastDeps } from "../renewals/forecast.js";
import { LicenceListError } from "../reconcile/lists.js";
import { ResellerError } from "../reseller/errors.js";
import { refreshedInBackground, type Computed } from "./refreshed-in-background.js";
import type { Store } from "../store/store.js";
import { AUDIT_ACTIONS } from "../vocabulary/audit.js";
import type { Actor } from "../vocabulary/roles.js";
import { mayAct, refuse } from "../admin/actions.js";

/**
 * The admin API's functions behind the console's adoption, audit, forecast and queue figures:
 * each page calls the function the API's route calls, with the operator, so the two answer alike.
 */
export interface AdminFunctions {
  /** Adoption: the plan for a service list, applied with `apply`. POST /admin/adopt's function. */
  adopt: (actor: Actor, params: { services: unknown[]; apply: boolean }) => Promise<{ ok: true; value: unknown } | { ok: false; status: number; message: string }>;
  /** The audit trail: GET /admin/audit's function. */
  audit: (filter: { actor?: string; service_id?: string; limit: number; cursor?: string }) => Promise<{
    audit: { at: string; actor: string; action: string; service_id: string | null; job_id: number | null; outcome: string }[];
    next_cursor: string | null;
  }>;
  /**
   * The renewals due and their cost against the balance: GET /admin/forecast's function, its
   * answer at most FORECAST_FRESH_MS old (`computed_at` says when).
   */
  forecast: (days: number) => Promise<Computed<Forecast>>;
  /** The queue's depth and the oldest due job's wait: GET /admin/queue's function. */
  queueLag: () => Promise<{ depth: number; oldest_due_seconds: number | null }>;
}


/** The console's pages on the admin API's own functions: adoption, the audit trail, the forecast, the queue. */
export function adminFunctions(deps: { store: Store; adoption: AdoptionDeps; forecast: ForecastDeps }): AdminFunctions {
  const forecasts = new Map<number, () => Promise<Computed<Forecast>>>();
  return {
    async adopt(actor, { services, apply }) {
      // As POST /admin/adopt: an admin's.
      if (!mayAct(actor, "adopt")) return refuse(deps.store.audit, actor, "adopt");
      const rows = parseRows(services);
      if (!rows.ok) {
        const [field, why] = Object.entries(rows.errors)[0]!;
        return { ok: false, status: 422, message: `${field}: ${why.join("; ")}` };
      }
      try {
        const audit = apply ? { actor: actor.name, action: AUDIT_ACTIONS.adoptApply, detail: "via the console" } : undefined;
        return { ok: true, value: await runAdoption(deps.adoption, rows.rows, { apply, ...(audit ? { audit } : {}) }) };
      } catch (err) {
        if (err instanceof LicenceListError) return { ok: false, status: 502, message: err.message };
        if (!(err instanceof ResellerError)) throw err;
        return { ok: false, status: 502, message: `cannot read the reseller's licence list: ${err.message}` };
      }
    },
    async audit({ actor, service_id, limit, cursor }) {
      // The admin API's own rule for an audit cursor; one it refuses starts from the newest.
      const parsed = idCursorSchema.safeParse(cursor);
      const id = parsed.success ? parsed.data : undefined;
      return auditPage(deps.store.audit, { actor, service_id, action: undefined, outcome: undefined, limit, cursor: id });
    },
    forecast(days) {
      let latest = forecasts.get(days);
      if (!latest) forecasts.set(days, (latest = refreshedInBackground(() => forecastRenewals(deps.forecast, days), FORECAST_FRESH_MS, deps.forecast.clock)));
      return latest();
    },
    async queueLag() {
      const q = await deps.store.jobs.queue();
      const depth = Object.values(q.queued).reduce((n, v) => n + v, 0);
      return { depth, oldest_due_seconds: q.oldestDueAt === null ? null : Math.round(q.oldestDueAgeMs / 1000) };
    },
  };
}

/** How old the console's forecast may be before a view asks for a new one (the balance it compares with is kept as long). */
export const FORECAST_FRESH_MS = 60_000;
