import type { SlotRule } from "../drift.js";

/**
 * The reseller holds a LiteSpeed licence at another core than the bridge recorded (its
 * change-core was made at the reseller). The variant upstream is recorded; the customer's
 * product is left as ordered. A terminated service's core no longer matters. Only the
 * reseller's licences have variants.
 */
export const variantDiffers: SlotRule = {
  kind: "variant_differs",
  detect: ({ svc, slot, license }) => {
    // A failed service's licence is drift of its own (status-differs.ts), whatever its core.
    if (!license || svc.status === "failed" || svc.status === "terminated" || slot.type !== "litespeed" || !license.variant) return undefined;
    const expected = svc.upstream_variant ?? svc.variant ?? "litespeed";
    return license.variant !== expected ? { expected, actual: license.variant } : undefined;
  },
  fixable: () => true,
  fixText: (_, { actual }) => `record ${actual} as the licence's variant upstream`,
  repair: "record_variant",
};
