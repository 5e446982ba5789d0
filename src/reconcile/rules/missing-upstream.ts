import type { SlotRule } from "../drift.js";
import { isLive } from "../match.js";

/**
 * A live service whose licence the reseller does not hold (or holds for another service). Only a
 * purchase or a person can answer it: reconcile never buys. A terminated or failed service's
 * licence is expected to be absent.
 */
export const missingUpstream: SlotRule = {
  kind: "missing_upstream",
  detect: ({ svc, license }) => (!license && isLive(svc) ? { expected: svc.status, actual: "absent" } : undefined),
  fixable: () => false,
  fixText: ({ svc, slot }) =>
    slot.heldBy
      ? `the reseller's ${slot.type} licence at ${svc.ip} is service ${slot.heldBy}'s; sort out which service owns it`
      : `needs a purchase: register ${slot.type} for ${svc.ip} at the reseller (reconcile never buys)`,
};
