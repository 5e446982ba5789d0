import type { Catalog } from "../catalog/catalog.js";
import { jobOf } from "../jobs/define.js";
import type { Intake } from "../intake/intake.js";
import { ENFORCE_SUSPENSION, INSTALL_MAIL } from "../intake/jobs.js";
import { licencesHeld } from "../intake/rules.js";
import type { AdoptionWrite, AuditDraft, Store } from "../store/store.js";
import { serviceQueueKey } from "../vocabulary/job-kinds.js";
import { licenceLists, readLists, type ListSources } from "../reconcile/lists.js";
import { readServiceBriefs } from "../reconcile/service-briefs.js";
import { asPlan, planAdoption, type AdoptionPlan, type PlannedRow } from "./plan.js";
import type { PriceList } from "../catalog/prices.js";
import type { AdoptionRow } from "./rows.js";

/** Where the lists are read (`upstream`: the reseller's; `providers`: every configured one), and the rest the plan and its writes need. */
export interface AdoptionDeps extends ListSources {
  store: Store;
  catalog: Catalog;
  prices: PriceList;
  allowPrivateIps: boolean;
  /** The one way into the durable job path: purchases (`buy`) are orders, judged and charged like any other. */
  intake: Intake;
}

export interface AdoptionOptions {
  /** Write the adoptions. (Default: false: plan only) */
  apply?: boolean;
  /** With `apply`: order the `buy` rows through the intake, as a panel's order would be. (Default: false) */
  buy?: boolean;
  /** With `apply`: mail the customers their install command (adopted and bought alike; not those adopted suspended). (Default: false) */
  mail?: boolean;
  /** The operator applying it: an audit entry for each service written, in its batch's transaction. */
  audit?: AuditDraft;
  /** Adopted services written per transaction. (Default: 500) */
  batchSize?: number;
  /** Called after each committed batch (how many rows so far, of how many). */
  onBatch?: (done: number, total: number) => void | Promise<void>;
}

/** The intake's source for purchases of an adoption: with the service id, the delivery a rerun finds again. */
export const ADOPTION_SOURCE = "adopt";

/**
 * Plans an import against each configured provider's licence list (one read each) and the bridge's services and,
 * with `apply`, writes what needs no purchase: each adopted service in batches, one short
 * transaction each, so an interrupted run keeps what it committed and a rerun finds those
 * services `managed` and finishes the rest. Writing buys nothing and mails nothing; purchases
 * are orders through the intake, only with `buy`. A service the panel has suspended is written
 * suspended, with reconcile's repair queued for each of its licences the reseller has active.
 */
export async function runAdoption(deps: AdoptionDeps, rows: readonly AdoptionRow[], options: AdoptionOptions = {}): Promise<AdoptionPlan> {
  const { licenses, sources } = await readLists(licenceLists(deps));
  const services = await readServiceBriefs(deps.store);
  const { planned, orphans } = await planAdoption({ rows, services, licenses, sources, catalog: deps.catalog, prices: deps.prices, allowPrivateIps: deps.allowPrivateIps });
  if (!options.apply) return asPlan(planned, orphans);

  await writeAdoptions(deps, planned, options);
  if (options.buy) await orderPurchases(deps, planned, options.mail === true);
  return asPlan(planned, orphans);
}

async function writeAdoptions(deps: AdoptionDeps, planned: PlannedRow[], options: AdoptionOptions): Promise<void> {
  const adopt = planned.filter((p) => p.adopted);
  const size = Math.max(1, options.batchSize ?? 500);
  for (let i = 0; i < adopt.length; i += size) {
    const batch = adopt.slice(i, i + size);
    const writes: AdoptionWrite[] = batch.map((p) => {
      const where = { serviceId: p.adopted!.service_id, queueKey: serviceQueueKey(p.adopted!.service_id) };
      // In the service's own queue, as reconcile queues it: a later unsuspend from the panel runs after it, never before.
      const enqueue = (p.suspendUpstream ?? []).map((l) => jobOf(ENFORCE_SUSPENSION, l, where));
      // A suspended licence is not one to install: once it is active, resend-install-mail sends it.
      if (options.mail && p.adopted!.customer_email && p.adopted!.status === "active") enqueue.push(jobOf(INSTALL_MAIL, {}, where));
      return { service: p.adopted!, history: [p.history!], ...(enqueue.length ? { enqueue } : {}) };
    });
    const byId = new Map(batch.map((p) => [p.adopted!.service_id, p]));
    const result = await deps.store.adoption.insert(writes, (w, holders) => {
      // Checked again inside the transaction: an order may have taken the IP since the plan was made.
      const mine = byId.get(w.service.service_id)!.held!;
      const keys = new Set(mine.map((l) => l.key));
      const other = holders.find((h) => licencesHeld(h).some((l) => keys.has(l.key)));
      return other ? `service ${other.service_id} of the bridge now holds ${w.service.ip} for ${mine.map((l) => l.label).join(" and ")}; one licence belongs to one service` : undefined;
    }, options.audit);
    for (const id of result.known) {
      const item = byId.get(id)!.item;
      byId.get(id)!.item = { ...item, action: "managed", reason: `the bridge came to manage service ${id} while the import ran; nothing written`, cost: null };
    }
    for (const r of result.refused) {
      const item = byId.get(r.service_id)!.item;
      byId.get(r.service_id)!.item = { ...item, action: "conflict", reason: r.reason, cost: null };
    }
    await options.onBatch?.(Math.min(i + size, adopt.length), adopt.length);
  }
}

/** The `buy` rows as orders (`service.created`), one delivery each, its id the service's: a rerun is a duplicate. */
async function orderPurchases(deps: AdoptionDeps, planned: PlannedRow[], mail: boolean): Promise<void> {
  for (const p of planned.filter((x) => x.item.action === "buy")) {
    const { row } = p;
    const event = {
      type: "service.created" as const,
      service: {
        id: row.service_identifier,
        product_id: row.package_identifier,
        billing_cycle: row.billing_cycle,
        ip: row.ip,
        ...(row.customer_email ? { customer: { email: row.customer_email, ...(row.customer_name ? { name: row.customer_name } : {}) } } : {}),
        ...(row.next_due_date ? { next_due_date: row.next_due_date } : {}),
      },
    };
    const [result] = await deps.intake(ADOPTION_SOURCE, [{ webhookId: `adopt:${row.service_identifier}`, event, mail }]);
    const item = p.item;
    switch (result!.status) {
      case "accepted":
      case "duplicate":
        p.item = { ...item, reason: `${item.reason}; ordered${result!.jobId === undefined ? "" : ` (job ${result!.jobId})`}, bought through the job queue` };
        break;
      case "invalid":
        p.item = { ...item, action: "conflict", reason: `the order was refused: ${Object.entries(result!.errors).map(([f, m]) => `${f} ${m.join(", ")}`).join("; ")}`, cost: null };
        break;
      case "retry_later":
        p.item = { ...item, action: "conflict", reason: `not ordered now: ${result!.reason}; run again`, cost: null };
        break;
      case "unknown_service":
        p.item = { ...item, action: "conflict", reason: "not ordered: the bridge does not know the service", cost: null };
        break;
    }
  }
}
