import { z } from "zod";
import { jobKind } from "../jobs/define.js";
import { JOB_KINDS } from "../vocabulary/job-kinds.js";
import { JOB_PRIORITY } from "../vocabulary/jobs.js";
import { ipSchema, productTypeSchema } from "../vocabulary/products.js";
import { PROVIDER_NAMES } from "../vocabulary/provider-names.js";

/**
 * The jobs an accepted event (or the sweep, reconcile, an order's activation) queues: each
 * kind's name, the payload its handler takes (checked when queued and again when run) and the
 * unique key that makes queueing it twice create nothing. The deciding core maps events to these;
 * the handlers (src/lifecycle/, src/mail/) attach to them with defineJob.
 */

export const REGISTER = jobKind({
  kind: JOB_KINDS.register,
  payload: z
    .object({
      reactivate: z.boolean().optional(),
      /** An order that came while the service's termination was queued: its row, written once that is done. */
      order: z.record(z.string(), z.unknown()).optional(),
      /** false: no install mail (a purchase for a service taken over from a panel's export, unless its operator asks for mail). */
      mail: z.literal(false).optional(),
    })
    .loose(),
});

/** One licence's renewal for one term: the key makes a second sweep of the same term create nothing. */
export const RENEW = jobKind({
  kind: JOB_KINDS.renew,
  payload: z.object({ term_end: z.number() }),
  uniqueKey: (p, where) => renewalKey(where.serviceId ?? "", p.term_end),
});

/** The unique key of one licence's renewal for one term. */
export function renewalKey(serviceId: string, termEnd: number): string {
  return `renew:${serviceId}:${termEnd}`;
}

const noPayload = z.object({}).loose();

export const SUSPEND = jobKind({ kind: JOB_KINDS.suspend, payload: noPayload });
export const UNSUSPEND = jobKind({ kind: JOB_KINDS.unsuspend, payload: noPayload });
export const TERMINATE = jobKind({ kind: JOB_KINDS.terminate, payload: noPayload });

export const CHANGE_IP = jobKind({ kind: JOB_KINDS.changeIp, payload: z.object({ ip: ipSchema }) });

export const CHANGE_PRODUCT = jobKind({ kind: JOB_KINDS.changeProduct, payload: z.object({ product_id: z.string() }) });

export const RECORD_PAYMENT = jobKind({ kind: JOB_KINDS.recordPayment, payload: z.object({ next_due_date: z.string().nullable().optional() }) });

/**
 * One repair per licence and state of the service (`seen_at`: its updated_at when reconcile
 * looked, for the unique key only; jobs queued by the release before it have none, and run).
 * The licence as its provider lists it: `provider` and `sku` (what it sells there: Manage2's
 * package, CLN's type), and `upstream_id`, its id there where it has one (Manage2's licenceid).
 * Payloads queued before providers carry none of them: they are the reseller's, `type` its SKU.
 */
export const ENFORCE_SUSPENSION = jobKind({
  kind: JOB_KINDS.enforceSuspension,
  payload: z.object({
    ip: ipSchema,
    type: productTypeSchema,
    provider: z.enum(PROVIDER_NAMES).optional(),
    sku: z.string().min(1).max(64).optional(),
    upstream_id: z.string().min(1).max(64).optional(),
    seen_at: z.number().optional(),
  }),
  uniqueKey: (p, where) => `enforce-suspension:${where.serviceId ?? ""}:${p.type}:${p.ip}:${p.seen_at}`,
});

/**
 * One install mail per order event (or per service, for a job queued without an event); an
 * operator's resend is one per request (`resend`: the request's id), so it is neither swallowed
 * by the order's mail nor queued twice by one request sent twice (a double-click, a retried call).
 */
export const INSTALL_MAIL = jobKind({
  kind: JOB_KINDS.installMail,
  payload: z.object({ resend: z.string().min(1).optional() }).loose(),
  // The customer has paid and waits for it: ahead of any backlog of lifecycle work.
  priority: JOB_PRIORITY.mail,
  uniqueKey: (p, where) => (p.resend ? `mail:install:resend:${where.serviceId ?? ""}:${p.resend}` : `mail:install:${where.eventId ?? where.serviceId ?? ""}`),
});
