import type { ProductType } from "./products.js";

/**
 * CloudLinux CLN's IP licence types: what each `type` number buys. Here on the ground floor so
 * the catalogue can check a product's `cln_type` against it.
 *
 * Sources: CloudLinux REST API, "IP-based licenses API", the type list (docs.cloudlinux.com/
 * cloudlinux_rest_api.pdf, in cloudlinux/cloudlinux-documentation docs/.vuepress/public/
 * cloudlinux_rest_api.pdf, 2024-10-01); the same list with prices in myadmin-plugins/
 * cloudlinux-licensing bin/cloudlinux_types.txt. Type 40 is "Imunify AV Plus" (ImunifyAV+), not
 * "Imunify360 Clean" as providers.md and the 2019 WHMCS module's constant have it; type 2 is in
 * no current list and is left out. Install commands: docs.cloudlinux.com/cloudlinux_installation,
 * docs.imunify360.com/installation and /imunifyav, docs.tuxcare.com/live-patching-services.
 */

/** What a type is, by CloudLinux's product lines. */
export type ClnProduct = "cloudlinux" | "kernelcare" | "imunify360" | "imunifyav" | "els" | "esu";

export interface ClnTypeInfo {
  /** As CloudLinux's list names it. */
  name: string;
  product: ClnProduct;
  /**
   * The bridge's product type a catalogue entry with this `cln_type` must name, where the bridge
   * has one (ImunifyAV+, ELS and ESU have none yet).
   */
  productType?: ProductType;
  /**
   * The vendor guide's install command for a server with an IP licence, where the guide gives
   * one for this type (CloudLinux OS also wants a reboot after it).
   */
  install?: string;
}

const CLDEPLOY = "wget https://repo.cloudlinux.com/cloudlinux/sources/cln/cldeploy && sh cldeploy -i";
const I360DEPLOY = "wget https://repo.imunify360.cloudlinux.com/defence360/i360deploy.sh -O i360deploy.sh && bash i360deploy.sh";
const IMUNIFY360 = { product: "imunify360", productType: "imunify360", install: I360DEPLOY } as const;
const ELS = { product: "els" } as const;

export const CLN_TYPES = {
  1: { name: "CloudLinux OS Legacy", product: "cloudlinux", productType: "cloudlinux", install: CLDEPLOY },
  1002: { name: "CloudLinux OS Shared Pro", product: "cloudlinux", productType: "cloudlinux", install: CLDEPLOY },
  4: { name: "CloudLinux OS Solo", product: "cloudlinux", productType: "cloudlinux" },
  5: { name: "CloudLinux OS Admin", product: "cloudlinux", productType: "cloudlinux", install: `${CLDEPLOY} --to-admin-edition` },
  16: { name: "KernelCare", product: "kernelcare", productType: "kernelcare", install: "curl -s -L https://kernelcare.com/installer | bash" },
  17: { name: "KernelCare Plus", product: "kernelcare", productType: "kernelcare" },
  40: {
    name: "Imunify AV Plus",
    product: "imunifyav",
    install: "wget https://repo.imunify360.cloudlinux.com/defence360/imav-deploy.sh -O imav-deploy.sh && bash imav-deploy.sh --key IPL",
  },
  41: { name: "Imunify for single user", ...IMUNIFY360 },
  44: { name: "Imunify for 5 users", ...IMUNIFY360 },
  42: { name: "Imunify for 30 users", ...IMUNIFY360 },
  43: { name: "Imunify for 250 users", ...IMUNIFY360 },
  49: { name: "Imunify Unlimited", ...IMUNIFY360 },
  3: { name: "ELS for CentOS 6", ...ELS },
  5003: { name: "ELS for Oracle Linux 6", ...ELS },
  5004: { name: "ELS for Ubuntu 16", ...ELS },
  5005: { name: "ELS for CentOS 8", ...ELS },
  5011: { name: "ELS for CentOS 6 + SLA", ...ELS },
  5012: { name: "ELS for CentOS 8 + SLA", ...ELS },
  5013: { name: "ELS for Oracle Linux 6 + SLA", ...ELS },
  5014: { name: "ELS for Ubuntu 16 + SLA", ...ELS },
  5017: { name: "ELS for CentOS 7 Standard", ...ELS },
  5018: { name: "ELS for CentOS 7 Complete", ...ELS },
  5019: { name: "ELS for Ubuntu 18", ...ELS },
  5020: { name: "ELS for Ubuntu 18 + SLA", ...ELS },
  5034: { name: "ELS for CentOS 8 Stream", ...ELS },
  5035: { name: "ELS for CentOS 8 Stream + SLA", ...ELS },
  7215: { name: "Extended Security Updates", product: "esu" },
} as const satisfies Readonly<Record<number, ClnTypeInfo>>;

export type ClnType = keyof typeof CLN_TYPES;
export const CLN_TYPE_NUMBERS: readonly ClnType[] = Object.keys(CLN_TYPES).map(Number) as ClnType[];

export function isClnType(type: number): type is ClnType {
  return Object.hasOwn(CLN_TYPES, type);
}

export function clnTypeInfo(type: number): ClnTypeInfo | undefined {
  return isClnType(type) ? CLN_TYPES[type] : undefined;
}

/**
 * Whether CLN's `convert` can change a licence of `from` into `to`: "Change Imunify IP license
 * type … you can upgrade only to the Imunify360 IP license" (REST API, convert). So any Imunify
 * type (ImunifyAV+ included) into an Imunify360 tier, never into itself.
 */
export function canConvert(from: number, to: number): boolean {
  const source = clnTypeInfo(from)?.product;
  return from !== to && (source === "imunify360" || source === "imunifyav") && clnTypeInfo(to)?.product === "imunify360";
}
