import type { ServiceRow } from "../store/store.js";

/**
 * When a licence's term is renewed: the one rule the sweep (what to queue), the forecast (what
 * the sweep will queue) and the renew job (whether what was queued still holds) all ask. The
 * stores only read candidates by their term end through `services_due`; what is due is decided
 * here, in one place a test can run as a table.
 *
 * Beside the charging rule, not in src/renewals/: the renew job (lifecycle, floor 5) asks it, and
 * may not import a floor above its own.
 */

/**
 * How far paid-until must lie beyond the upstream term end for the term to be renewed: a day.
 * Paid-until and the term end come from different clocks (the panel's due date, the reseller's
 * expiry, a licence adopted minutes before its new paid cycle began), so a gap of minutes or
 * hours is the same date seen twice, and renewing for it would buy a whole cycle for nothing.
 */
export const RENEWAL_MIN_GAP_MS = 86_400_000;

/** What the rule reads of a service: its row, or a candidate a store read by its term end. */
export type RenewalFacts = Pick<ServiceRow, "status" | "expires_at" | "paid_until">;

/** Due: the term it renews (the term end the renewal's unique key names). Not due: why, in words. */
export type RenewalVerdict = { due: true; term: number } | { due: false; why: string };

/**
 * Whether the licence's current term is to be renewed: the service is active and the customer
 * has paid a day or more beyond the term's end. With `window` (the sweep, the forecast), also
 * only once the term ends within `leadMs` of `now`; without it (the renew job, whose term was
 * queued under some lead already), whenever.
 */
export function renewalDue(svc: RenewalFacts, window?: { now: number; leadMs: number }): RenewalVerdict {
  if (svc.status !== "active") return { due: false, why: `the service is ${svc.status}` };
  const term = svc.expires_at;
  if (term === null) return { due: false, why: "the upstream term end is not known" };
  if (svc.paid_until === null || svc.paid_until < term + RENEWAL_MIN_GAP_MS) return { due: false, why: "not paid a day or more beyond the current term" };
  if (window && term - window.leadMs > window.now) return { due: false, why: "the term ends after the renewal lead" };
  return { due: true, term };
}
