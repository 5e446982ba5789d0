import { jobOf } from "../jobs/define.js";
import { ENFORCE_SUSPENSION } from "../intake/jobs.js";
import { isoToMs } from "../lifecycle/record.js";
import type { AuditDraft, NewHistory, ServicePatch, Store } from "../store/store.js";
import { JOB_KINDS, serviceQueueKey } from "../vocabulary/job-kinds.js";
import type { ProductType } from "../vocabulary/products.js";
import { PROVIDER_TITLES } from "../vocabulary/providers.js";
import type { DriftItem, HandledItem, Repair } from "./drift.js";
import type { Listed } from "./lists.js";
import { providerOfService, skuOfSlot } from "./match.js";
import { awaitSuspensions, type QueuedSuspension } from "./suspensions.js";

/**
 * What `reconcile --fix` does with the drift found: the repairs the rules marked, made service by
 * service, each in one transaction. Nothing is bought; what needs a purchase or a person is
 * handed back as manual.
 */

/** Job kinds that change a service's status, IP or variant: while one is unfinished, reconcile only reports. */
const MOVING_KINDS = [
  JOB_KINDS.register,
  JOB_KINDS.suspend,
  JOB_KINDS.unsuspend,
  JOB_KINDS.terminate,
  JOB_KINDS.changeIp,
  JOB_KINDS.changeProduct,
  JOB_KINDS.enforceSuspension,
] as const;

export interface RepairOptions {
  /** How long to wait for the queued upstream suspensions before reporting them as still queued. */
  waitMs: number;
  /** The operator who asked: each service's repair writes an entry in its transaction. */
  audit?: AuditDraft;
  /** Called as each service is repaired (or left, being busy). */
  onProgress?: (done: number, total: number) => void;
}

/** Makes `repairs` (for the items of `drift` found fixable); the rest of the drift is manual. */
export async function repairDrift(
  store: Pick<Store, "services" | "jobs">,
  drift: readonly DriftItem[],
  repairs: readonly Repair[],
  options: RepairOptions,
): Promise<{ fixed: HandledItem[]; manual: HandledItem[] }> {
  const fixed: HandledItem[] = [];
  const manual: HandledItem[] = drift.filter((d) => !d.fixable);
  // Services with a lifecycle job queued or running are mid-change: reconcile reports but does not touch them.
  const busy = await store.services.busy(MOVING_KINDS);
  const repairsBySvc = new Map<string, Repair[]>();
  for (const r of repairs) {
    const list = repairsBySvc.get(r.slot.svc.service_id);
    if (list) list.push(r);
    else repairsBySvc.set(r.slot.svc.service_id, [r]);
  }
  let done = 0;
  const queued: QueuedSuspension[] = [];
  for (const [serviceId, list] of repairsBySvc) {
    if (busy.has(serviceId)) {
      const why = "a job for this service is queued or running; run reconcile again when it has finished";
      manual.push(...list.map((r) => ({ ...r.item, fix: why })));
    } else {
      const outcome = await repairService(store, serviceId, list, options.audit);
      fixed.push(...outcome.fixed);
      manual.push(...outcome.manual);
      queued.push(...outcome.queued);
    }
    done++;
    options.onProgress?.(done, repairsBySvc.size);
  }
  const settled = await awaitSuspensions(store, queued, options.waitMs);
  fixed.push(...settled.fixed);
  manual.push(...settled.manual);
  return { fixed, manual };
}

/**
 * Repairs one service in one transaction: upstream suspensions are queued as jobs in the
 * service's own queue (never called from here, where they could cross a queued unsuspend), and
 * what the bridge records is written. When the service changed since reconcile read it, its own
 * jobs moved it: their word wins, and the drift is reported again next run.
 */
async function repairService(
  store: Pick<Store, "services">,
  serviceId: string,
  repairs: Repair[],
  audit?: AuditDraft,
): Promise<{ fixed: HandledItem[]; manual: HandledItem[]; queued: QueuedSuspension[] }> {
  const fixed: HandledItem[] = [];
  const seen = repairs[0]!.slot.svc;
  const provider = providerOfService(seen);
  const at = PROVIDER_TITLES[provider];
  const history: NewHistory[] = [];
  const note = (action: string, detail: string) => history.push({ action: `reconcile: ${action}`, detail });
  const suspensions = repairs.filter((x) => x.action === "suspend_upstream");
  // The licence as its provider lists it: whose it is, what it is there, and its id there (Manage2's licenceid).
  const enqueue = suspensions.map((r) => {
    const l = r.slot.license!;
    const payload = { ip: l.ip, type: r.slot.type as ProductType, provider, sku: skuOfSlot(r.slot), ...(l.upstream_id ? { upstream_id: l.upstream_id } : {}), seen_at: seen.updated_at };
    return jobOf(ENFORCE_SUSPENSION, payload, { serviceId, queueKey: serviceQueueKey(serviceId) });
  });
  const patch: ServicePatch = {};
  for (const r of repairs.filter((x) => x.action !== "suspend_upstream")) {
    const l = r.slot.license!;
    switch (r.action) {
      case "record_suspended":
        if (patch.status !== "suspended") {
          patch.status = "suspended";
          note("suspended", `${at} has the ${r.slot.type} licence at ${l.ip} suspended; recorded the service as suspended (was active)`);
        }
        fixed.push({ ...r.item, fix: `recorded the service as suspended, as ${at} has it` });
        break;
      case "record_ip":
        if (patch.ip === undefined) {
          patch.ip = l.ip;
          note("ip recorded", `${at} has the licence at ${l.ip}, the bridge had ${seen.ip}; recorded ${l.ip}`);
        }
        fixed.push({ ...r.item, fix: `recorded ${l.ip} as the service's IP` });
        break;
      case "record_variant": {
        patch.upstream_variant = l.variant!;
        const ordered = seen.variant && seen.variant !== l.variant ? `; the customer's product is ${seen.variant}: send service.product_changed to change core` : "";
        note("variant recorded", `the reseller has the licence as ${l.variant}, the bridge had ${r.item.expected}; recorded ${l.variant}${ordered}`);
        fixed.push({ ...r.item, fix: `recorded ${l.variant} as the licence's variant upstream${ordered}` });
        break;
      }
    }
  }
  if (fixed.length > 0) {
    // Only where the provider's list shows an expiry (the reseller's); Manage2's and CLN's show none.
    const expiry = upstreamExpiry(repairs.map((r) => r.slot.license!));
    if (expiry !== undefined && expiry !== seen.expires_at) {
      patch.expires_at = expiry;
      note("expiry recorded", `${at}'s licence expires ${new Date(expiry).toISOString()}, the bridge had ${seen.expires_at === null ? "none" : new Date(seen.expires_at).toISOString()}`);
    }
  }
  const entries = audit ? [{ ...audit, detail: repairs.map((r) => `${r.item.kind}: ${r.item.fix ?? r.action}`).join("; ") }] : undefined;
  const { applied, jobIds } = await store.services.change({ serviceId, ifUpdatedAt: seen.updated_at, patch, history, enqueue, audit: entries });
  if (!applied) {
    const raced = (r: Repair): HandledItem => ({ ...r.item, fix: "the service changed while reconcile ran; run reconcile again" });
    return { fixed: [], manual: repairs.map(raced), queued: [] };
  }
  const queued = suspensions.map((r, i) => ({ item: r.item, jobId: jobIds[i]!, what: `the ${r.slot.type} licence at ${r.slot.license!.ip}`, at }));
  return { fixed, manual: [], queued };
}

/** The earliest expiry the provider lists for these licences (a bundle ends with its first component). */
function upstreamExpiry(licenses: Listed[]): number | undefined {
  const times = licenses.map((l) => isoToMs(l.expires_at)).filter((t): t is number => t !== undefined);
  return times.length ? Math.min(...times) : undefined;
}
