import type { SlotRule } from "../drift.js";
import { isLive } from "../match.js";

/**
 * A live service whose licence its provider does not hold (or holds for another service). Only a
 * purchase or a person can answer it: reconcile never buys. A terminated or failed service's
 * licence is expected to be absent, and so is a suspended one's where the provider suspends by
 * removing the licence (CLN).
 */
export const missingUpstream: SlotRule = {
  kind: "missing_upstream",
  detect: ({ svc, license, source }) =>
    !license && isLive(svc) && !(svc.status === "suspended" && source.suspension === "by-removal") ? { expected: svc.status, actual: "absent" } : undefined,
  fixable: () => false,
  fixText: ({ svc, slot, source }) =>
    slot.heldBy
      ? `${source.label}'s ${slot.type} licence at ${svc.ip} is service ${slot.heldBy}'s; sort out which service owns it`
      : `needs a purchase: register ${slot.type} for ${svc.ip} at ${source.label} (reconcile never buys)`,
};
