import { clnTypeInfo } from "../vocabulary/cln-types.js";
import { MANAGE2_PRODUCT_TYPES, isManage2ProductType, type Manage2ProductLine } from "../vocabulary/manage2-products.js";

/**
 * The install command of a Manage2 or CLN product: neither API gives one (the reseller's API
 * does), so the catalogue's `install_command` is a template in which `{ip}` stands for the
 * licence's IP, and without it the command of the vendor's guide for that product.
 */

/** The one placeholder a template may hold. */
export const IP_PLACEHOLDER = "{ip}";

/** The vendor guide's command for a product of `type` bought through Manage2, where one is confirmed. */
export function manage2DefaultInstall(type: string): string | null {
  return isManage2ProductType(type) ? ((MANAGE2_PRODUCT_TYPES[type] as Manage2ProductLine).install ?? null) : null;
}

/** The vendor guide's command for a CLN licence of `clnType`, where one is confirmed. */
export function clnDefaultInstall(clnType: number): string | null {
  return clnTypeInfo(clnType)?.install ?? null;
}

/**
 * Why `template` cannot be an install command, or null when it can: one line of printable text
 * (it goes into a customer's mail and the answer of the provisioning API) whose only `{name}` is
 * `{ip}`. A shell's `${VAR}` is left alone; `{IP}` or `{address}` would reach the customer as
 * written, so they are refused as the typos they are.
 */
export function installTemplateProblem(template: string): string | null {
  if (template.trim() === "") return "must not be empty";
  if ([...template].length > 2000) return "must be at most 2000 characters";
  if (/\p{Cc}/u.test(template)) return "must be one line without control characters";
  const unknown = [...template.matchAll(/(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[0]).filter((p) => p !== IP_PLACEHOLDER);
  if (unknown.length) return `has ${[...new Set(unknown)].join(", ")}: the only placeholder is ${IP_PLACEHOLDER}`;
  return null;
}

/** The command for the licence at `ip`. */
export function renderInstallCommand(template: string, ip: string): string {
  return template.split(IP_PLACEHOLDER).join(ip);
}
