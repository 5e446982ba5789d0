/**
 * What CLN can and cannot do, for the provider port: a licence is billed each month while it is
 * registered (no renew call), suspended by removing it, moved to another IP by registering the new
 * one before removing the old, and its list shows neither status nor expiry. A register answers
 * the licence already there (the same account's), so a register sent again after a lost answer
 * buys nothing twice.
 * (CLN REST API; imunify360.com/legal/terms-of-use/billing-terms; CloudLinux's WHMCS module.)
 */
export const CLN_CAPABILITIES = {
  renewal: "billed_while_active",
  suspension: "by_removal",
  changeIp: "register_then_remove",
  changeProduct: "convert_or_register_then_remove",
  listShows: { status: false, expiry: false },
  acquireIsIdempotent: true,
} as const;
