import type { ProviderCapabilities } from "../port.js";

/**
 * What CLN can and cannot do, for the provider port: a licence is billed each month while it is
 * registered (no renew call), suspended by removing it, moved to another IP by registering the new
 * one before removing the old, and its list shows neither status nor expiry. A register answers
 * the licence already there (the same account's), so a register sent again after a lost answer
 * buys nothing twice.
 * (CLN REST API; imunify360.com/legal/terms-of-use/billing-terms; CloudLinux's WHMCS module.)
 */
export const CLN_CAPABILITIES = {
  renewal: "billed-while-active",
  suspension: "by-removal",
  /** Unsuspending registers the licence again: a purchase. */
  unsuspendBills: true,
  changeIp: "register-then-remove",
  changeProduct: "convert-or-register-then-remove",
  list: { status: false, expiry: false },
  bundles: false,
  acquireIsIdempotent: true,
} as const satisfies ProviderCapabilities;
