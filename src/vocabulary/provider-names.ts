/**
 * Who sells a licence (issue 36): the reseller, cPanel's Manage2, CloudLinux's CLN. On the ground
 * floor because the store keeps the name on every service and the admin API's listing filters
 * by it, below the provider port (src/providers/port.ts) that gives each name its adapter.
 */
export const PROVIDER_NAMES = ["reseller", "manage2", "cln"] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** Whose a licence is when nothing names a provider: every service before migration 16, every catalogue product without `provider`. */
export const DEFAULT_PROVIDER: ProviderName = "reseller";
