/**
 * The licence providers the bridge buys from (service-contract.md section 12), as the operator
 * reads them and where their APIs live. The names themselves are provider-names.ts's, re-exported
 * so a module wanting both imports once.
 */
import type { ProviderName } from "./provider-names.js";

export { DEFAULT_PROVIDER, PROVIDER_NAMES, type ProviderName } from "./provider-names.js";

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
