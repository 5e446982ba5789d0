import type { SlotRule, UnclaimedRule } from "../drift.js";
import { ipDiffers } from "./ip-differs.js";
import { missingUpstream } from "./missing-upstream.js";
import { activeUpstream, heldAfterFailure, stoppedUpstream } from "./status-differs.js";
import { unknownLocally } from "./unknown-locally.js";
import { variantDiffers } from "./variant-differs.js";

/**
 * Every drift rule reconcile applies. A new kind of difference (a provider's, say) is a file of
 * this folder and an entry here.
 */

/**
 * Asked of each licence a service stands for, in this order: a licence's items are listed in
 * it. A pending service is asked nothing (a registration in flight may or may not have bought
 * it yet).
 */
export const SLOT_RULES: readonly SlotRule[] = [missingUpstream, heldAfterFailure, ipDiffers, stoppedUpstream, activeUpstream, variantDiffers];

/** Asked of each licence of a provider that no service accounts for, after every service. */
export const UNCLAIMED_RULES: readonly UnclaimedRule[] = [unknownLocally];
