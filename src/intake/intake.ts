import type { Catalog } from "../catalog/catalog.js";
import type { ErrorCode } from "../vocabulary/error-codes.js";
import { serviceQueueKey } from "../vocabulary/job-kinds.js";
import type { AcceptedItem, AuditDraft, Store } from "../store/store.js";
import { decide, type DecideOptions, type Verdict } from "./decide.js";
import type { BillingEvent, FieldErrors } from "./event-schema.js";

export type IntakeResult =
  /**
   * `jobId`: the job the event queued, when it needs work. `nothingToDo`: why it needs none (it
   * is stored all the same); `answerFor`: the job under way whose outcome is this event's too.
   */
  | { status: "accepted"; eventId: string; jobId?: number; nothingToDo?: string; answerFor?: number }
  /** `type`: the stored event's, which a source whose type rests on an unsigned input compares with its own. */
  | { status: "duplicate"; eventId: string; type: string; jobId?: number }
  | { status: "unknown_service" }
  | { status: "invalid"; errors: FieldErrors; code: ErrorCode }
  /** Not stored, but the same event sent again later will be (e.g. a termination still being applied). */
  | { status: "retry_later"; reason: string };

export interface IntakeItem {
  webhookId: string;
  event: BillingEvent;
  /** false: an order's registration sends no install mail (see DecideOptions). */
  mail?: boolean;
  /** An operator's action: its audit entry is committed with the event (and its job). */
  audit?: AuditDraft;
}

export interface IntakeDeps {
  store: Store;
  catalog: Catalog;
  /** ALLOW_PRIVATE_IPS. (Default: false) */
  allowPrivateIps?: boolean;
}

/**
 * Several events of one delivery (a panel's "service edited" hook may mean a renewal and an IP
 * change): all are stored, or none is.
 */
export type Intake = (source: string, items: readonly IntakeItem[]) => Promise<IntakeResult[]>;

/**
 * The one path every event takes into the bridge, from every way in: deduplicate on (source,
 * webhook id), decide (decide.ts: the rules, against the service as its accepted events will leave
 * it), and commit the event with its job in one transaction that is fsynced before the answer, so
 * an acknowledged event is never lost and a repeated one creates nothing.
 */
export function createIntake(deps: IntakeDeps): Intake {
  const { store } = deps;
  const rules = { catalog: deps.catalog, allowPrivateIps: deps.allowPrivateIps ?? false };

  /** One delivery's events are stored together or not at all (a refused IP change must not leave its renewal behind). */
  const keepAll = (results: readonly AcceptedItem<Verdict>[]) => !results.some((r) => "result" in r && r.result.status === "invalid");
  const keepAny = () => true;
  /** The job an event stored earlier queued: a duplicate's work is the first delivery's. */
  const jobOf = async (serviceId: string, eventId: string) => (await store.jobs.list({ serviceId, limit: 50 })).find((j) => j.eventId === eventId)?.id;
  const duplicate = async (item: IntakeItem, eventId: string, type: string): Promise<IntakeResult> => {
    const jobId = await jobOf(item.event.service.id, eventId);
    return { status: "duplicate", eventId, type, ...(jobId === undefined ? {} : { jobId }) };
  };

  return async (source, items) => {
    const quiet = items.some((i) => i.mail === false) ? new Set(items.filter((i) => i.mail === false).map((i) => i.webhookId)) : undefined;
    const accepted = await store.events.accept(
      source,
      items.map((item) => ({
        webhookId: item.webhookId,
        event: item.event,
        ...(item.audit ? { audit: item.audit } : {}),
        queueKey: serviceQueueKey(item.event.service.id),
        ip: item.event.type === "service.created" ? item.event.service.ip : item.event.type === "service.ip_changed" ? item.event.changes?.ip : undefined,
      })),
      (item, view) => decide(item.event, view, rules, quiet?.has(item.webhookId) ? QUIET : LOUD),
      items.length < 2 ? keepAny : keepAll,
    );
    // Only a duplicate needs a look-up: the rest answer at once, with no promise each.
    let lookUps = false;
    const results = accepted.items.map((r, i): IntakeResult | Promise<IntakeResult> => {
      if ("duplicate" in r) {
        lookUps = true;
        return duplicate(items[i]!, r.duplicate, r.type);
      }
      if (!accepted.stored && r.result.status === "accepted") return { status: "retry_later", reason: "not stored: another event of the same delivery was refused" };
      if (r.result.status === "accepted") {
        const { nothingToDo, answerFor } = r.result;
        return { status: "accepted", eventId: r.eventId!, ...(r.jobId === undefined ? {} : { jobId: r.jobId }), ...(nothingToDo ? { nothingToDo } : {}), ...(answerFor ? { answerFor } : {}) };
      }
      return r.result;
    });
    return lookUps ? Promise.all(results) : (results as IntakeResult[]);
  };
}

const QUIET: DecideOptions = Object.freeze({ mail: false });
const LOUD: DecideOptions = Object.freeze({});
