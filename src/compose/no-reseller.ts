import { ForbiddenError } from "../reseller/errors.js";
import type { Upstream } from "../reseller/upstream.js";

/** Why nothing can be asked of the reseller: the configuration names none. */
export const NO_RESELLER =
  "no reseller is configured (the catalogue buys from Manage2 and CLN alone); set RESELLER_API_URL and RESELLER_API_TOKEN to use the reseller";

/**
 * The reseller's Upstream where none is configured, for what still reads the reseller's list
 * (reconcile, adoption): every call is refused with a ResellerError saying so, which those
 * routes answer as the reseller's list being unavailable. No job reaches it: the provider
 * registry has no reseller, so a reseller service's job blocks naming it.
 */
export function noResellerUpstream(): Upstream {
  const refuse = (operation: string) => () => Promise.reject(new ForbiddenError({ operation: `reseller.${operation}`, message: NO_RESELLER }));
  return {
    protocol: "v1",
    register: refuse("register"),
    renew: refuse("renew"),
    suspend: refuse("suspend"),
    unsuspend: refuse("unsuspend"),
    changeIp: refuse("changeIp"),
    changeCore: refuse("changeCore"),
    registerBundle: refuse("registerBundle"),
    licensesAt: refuse("licensesAt"),
    listLicenses: refuse("listLicenses"),
    installCommand: refuse("installCommand"),
    stopCalls: () => undefined,
  };
}
