/**
 * The panel modules that call the provisioning API, as they name themselves in their User-Agent
 * (`license-bridge-<panel>/<version>`, integrations/shared/LicenseBridgeClient.php). The bridge
 * records which module (and version) called, per call and per service, and warns about modules
 * older than it supports.
 */

/** The version of the modules shipped with this release (integrations/): generated into their core. */
export const MODULE_VERSION = "0.2.0";

/**
 * The oldest module version this bridge works with. A module older than this still calls the
 * same API, but misses fixes the bridge relies on; the bridge says so at every call (a warning
 * line, once per process and version) and in the admin API.
 */
export const MIN_MODULE_VERSION = "0.2.0";

export interface ModuleClient {
  /** whmcs, blesta, fossbilling, paymenter, hostbill, upmind, or another panel's name. */
  panel: string;
  version: string;
}

const MODULE_AGENT = /^license-bridge-([a-z0-9]{1,32})\/(\d{1,4}\.\d{1,4}\.\d{1,4})(?:[\s;(]|$)/i;

/** The module a User-Agent names; undefined for any other client (curl, Upmind's own provider). */
export function moduleClientOf(userAgent: string | undefined): ModuleClient | undefined {
  const m = userAgent ? MODULE_AGENT.exec(userAgent.trim()) : null;
  return m ? { panel: m[1]!.toLowerCase(), version: m[2]! } : undefined;
}

/** `panel/version`, as stored on a service and shown in the admin API. */
export function moduleLabel(c: ModuleClient): string {
  return `${c.panel}/${c.version}`;
}

/** Whether `version` is older than MIN_MODULE_VERSION (numeric, part by part). */
export function isOutdated(version: string, min = MIN_MODULE_VERSION): boolean {
  const a = version.split(".").map(Number);
  const b = min.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0);
  }
  return false;
}
