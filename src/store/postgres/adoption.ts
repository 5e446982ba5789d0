import type { AdoptionOps } from "../ports/adoption.js";
import { LOCKS, queueLock, type PgDb } from "./database.js";
import type { PgAudit } from "./audit.js";
import type { PgJobs } from "./jobs.js";
import type { PgServices } from "./services.js";

/**
 * Adopted services on PostgreSQL: one transaction per batch, holding the locks an intake takes for
 * an order (the service, its IP), so an order of the same service, or of another at the same IP,
 * arriving at another instance meanwhile is judged before or after the batch, never beside it.
 */
export function pgAdoption(db: PgDb, services: PgServices, jobs: PgJobs, audit: PgAudit): AdoptionOps {
  return {
    async insert(batch, refuse, draft) {
      return db.tx(async (t) => {
        await t.lock(
          batch.flatMap((w) => [
            { ns: LOCKS.service, key: w.service.service_id },
            { ns: LOCKS.ip, key: w.service.ip },
            ...(w.enqueue ?? []).flatMap((j) => (j.queueKey ? [queueLock(j.queueKey)] : [])),
          ]),
        );
        const now = await t.now();
        const out: Awaited<ReturnType<AdoptionOps["insert"]>> = { inserted: [], known: [], refused: [] };
        for (const w of batch) {
          const { service } = w;
          if (await services.getForUpdate(t, service.service_id)) {
            out.known.push(service.service_id);
            continue;
          }
          const reason = refuse(w, await services.holdersIn(t, service.ip, service.service_id));
          if (reason) {
            out.refused.push({ service_id: service.service_id, reason });
            continue;
          }
          await services.insertIn(t, service, now);
          await services.updateIn(t, service.service_id, { upstream_variant: service.upstream_variant, bundle_key: service.bundle_key, companions: service.companions }, now);
          await services.historyIn(t, service.service_id, w.history, now);
          if (w.enqueue?.length) await jobs.insert(t, w.enqueue);
          if (draft) await audit.forChangeIn(t, [draft], service.service_id, "ok", null);
          out.inserted.push(service.service_id);
        }
        return out;
      });
    },
  };
}
