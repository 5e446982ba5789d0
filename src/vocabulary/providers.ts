/**
 * The licence providers the bridge buys from (service-contract.md section 12), by the name a
 * catalogue product, a service, a log line and a metric label give them. On the ground floor so
 * the catalogue, the configuration and the provider port share one list.
 */
export const PROVIDER_NAMES = ["reseller", "manage2", "cln"] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** A catalogue product without `provider` is the reseller's, as every product was before providers. */
export const DEFAULT_PROVIDER: ProviderName = "reseller";

/** What the operator reads in a start-up line or the console. */
export const PROVIDER_TITLES: Readonly<Record<ProviderName, string>> = {
  reseller: "the reseller",
  manage2: "cPanel Manage2",
  cln: "CloudLinux CLN",
};

/**
 * Where each distributor's API lives unless configured otherwise: Manage2's `<Function>.cgi`
 * paths (docs.cpanel.net/manage2/knowledge-base/guide-to-the-manage2-api/) and CLN's
 * `/api/ipl/...` (docs.cloudlinux.com/cloudlinux_rest_api.pdf). The clients in src/providers/
 * default to the same addresses.
 */
export const MANAGE2_DEFAULT_URL = "https://manage2.cpanel.net";
export const CLN_DEFAULT_URL = "https://cln.cloudlinux.com";
