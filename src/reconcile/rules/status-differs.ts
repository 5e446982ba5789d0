import type { SlotRule } from "../drift.js";

/**
 * The bridge and the reseller disagree on whether a licence is in force. Three cases, each its
 * own rule: they expect different things and are answered differently.
 */

/** A registration that failed, though the reseller holds the licence: a person decides whether to keep it. */
export const heldAfterFailure: SlotRule = {
  kind: "status_differs",
  detect: ({ svc, license, upstream }) => (license && svc.status === "failed" ? { expected: "absent", actual: upstream ?? "present" } : undefined),
  fixable: () => false,
  fixText: () => "the registration failed yet the reseller has the licence: resend service.created (the bridge adopts it and buys nothing), or cancel it at the reseller",
};

/**
 * An active service whose licence the reseller has otherwise: suspended is recorded as the
 * reseller has it; expired, cancelled or the like needs a renewal, which reconcile never makes.
 */
export const stoppedUpstream: SlotRule = {
  kind: "status_differs",
  detect: ({ svc, license, upstream }) => (license && upstream !== undefined && svc.status === "active" && upstream !== "active" ? { expected: "active", actual: upstream } : undefined),
  fixable: (_, { actual }) => actual === "suspended",
  fixText: (_, { actual }) =>
    actual === "suspended" ? "record the service as suspended, as the reseller has it" : `the reseller has the licence ${actual}: renew or reactivate it at the reseller (reconcile never buys)`,
  repair: "record_suspended",
};

/** A suspended or terminated service whose licence the reseller has active: it is suspended there, by a job in the service's queue. */
export const activeUpstream: SlotRule = {
  kind: "status_differs",
  detect: ({ svc, license, upstream }) =>
    license && (svc.status === "suspended" || svc.status === "terminated") && upstream === "active" ? { expected: "suspended", actual: upstream } : undefined,
  fixable: () => true,
  fixText: ({ svc, slot, license }) => `suspend the ${slot.type} licence at ${license!.ip} at the reseller (the service is ${svc.status})`,
  repair: "suspend_upstream",
};
