import type { Clock } from "../../clock.js";
import type { AdoptionOps, AdoptionWrite } from "../ports/adoption.js";
import type { SqliteAudit } from "./audit.js";
import type { Db } from "./database.js";
import type { SqliteJobs } from "./jobs.js";
import type { SqliteServices } from "./services.js";

/** Adopted services on SQLite: one immediate transaction per batch. */
export function sqliteAdoption(db: Db, clock: Clock, services: SqliteServices, jobs: SqliteJobs, audit: SqliteAudit): AdoptionOps {
  const insert = db.transaction((batch: readonly AdoptionWrite[], refuse: Parameters<AdoptionOps["insert"]>[1], draft: Parameters<AdoptionOps["insert"]>[2]) => {
    const now = clock.now();
    const out: Awaited<ReturnType<AdoptionOps["insert"]>> = { inserted: [], known: [], refused: [] };
    for (const w of batch) {
      const { service } = w;
      if (services.getSync(service.service_id)) {
        out.known.push(service.service_id);
        continue;
      }
      const reason = refuse(w, services.holdersSync(service.ip, service.service_id));
      if (reason) {
        out.refused.push({ service_id: service.service_id, reason });
        continue;
      }
      services.insertSync(service, now);
      services.updateSync(service.service_id, { upstream_variant: service.upstream_variant, bundle_key: service.bundle_key, companions: service.companions }, now);
      for (const h of w.history) services.addHistorySync(service.service_id, h, now);
      for (const j of w.enqueue ?? []) jobs.enqueueSync(j);
      if (draft) audit.forChangeSync([draft], service.service_id, "ok", null, now);
      out.inserted.push(service.service_id);
    }
    return out;
  });
  return {
    async insert(batch, refuse, draft) {
      return insert.immediate(batch, refuse, draft);
    },
  };
}
