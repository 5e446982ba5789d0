import type { SlotRule } from "../drift.js";

/**
 * The bridge and the service's provider disagree on whether a licence is in force. Three cases,
 * each its own rule: they expect different things and are answered differently. Each needs the
 * licence's status, so none speaks where the provider's list shows none (`upstream` undefined),
 * except that a licence listed by a provider that suspends by removing it is in force.
 */

/** A registration that failed, though the provider holds the licence: a person decides whether to keep it. */
export const heldAfterFailure: SlotRule = {
  kind: "status_differs",
  detect: ({ svc, license, upstream }) => (license && svc.status === "failed" ? { expected: "absent", actual: upstream ?? "present" } : undefined),
  fixable: () => false,
  fixText: ({ source }) =>
    `the registration failed yet ${source.label} has the licence: resend service.created (the bridge adopts it and buys nothing), or cancel it at ${source.label}`,
};

/**
 * An active service whose licence the provider has otherwise: suspended is recorded as the
 * provider has it; expired, cancelled or the like needs a renewal or a reactivation (Manage2's
 * may bill), which reconcile never makes.
 */
export const stoppedUpstream: SlotRule = {
  kind: "status_differs",
  detect: ({ svc, license, upstream }) => (license && upstream !== undefined && svc.status === "active" && upstream !== "active" ? { expected: "active", actual: upstream } : undefined),
  fixable: (_, { actual }) => actual === "suspended",
  fixText: ({ source }, { actual }) =>
    actual === "suspended"
      ? `record the service as suspended, as ${source.label} has it`
      : `${source.label} has the licence ${actual}: renew or reactivate it at ${source.label} (reconcile never buys)`,
  repair: "record_suspended",
};

/**
 * A suspended or terminated service whose licence its provider has active (and bills, where it
 * bills while active): it is suspended there (the reseller's suspend, Manage2's expire, CLN's
 * remove), by a job in the service's queue.
 */
export const activeUpstream: SlotRule = {
  kind: "status_differs",
  detect: ({ svc, license, upstream }) =>
    license && (svc.status === "suspended" || svc.status === "terminated") && upstream === "active" ? { expected: "suspended", actual: upstream } : undefined,
  fixable: () => true,
  fixText: ({ svc, slot, license, source }) => `suspend the ${slot.type} licence at ${license!.ip} at ${source.label} (the service is ${svc.status})`,
  repair: "suspend_upstream",
};
