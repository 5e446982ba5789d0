import { CLN_TYPES } from "./cln-types.js";
import type { ProductType } from "./products.js";

/**
 * The bridge's product types that cPanel sells through Manage2, each with the `producttype` bit
 * Manage2 gives its packages and licences (XMLlicenseInfo: 1 cPanel & WHM, 16 CloudLinux,
 * 32 KernelCare, 128 LiteSpeed, 256 Imunify360, 1024 JetBackup;
 * docs.cpanel.net/manage2/api/manage2-api-list-license-information/), so a package's product can
 * be checked against the catalogue's `type`; and the vendor guide's install command for a server
 * with an IP licence, where one is confirmed (notes/providers-research.md, part C).
 */

/** docs.cpanel.net/installation-guide/install/ */
export const CPANEL_INSTALL_COMMAND = "cd /home && curl -o latest -L https://securedownloads.cpanel.net/latest && sh latest";

export interface Manage2ProductLine {
  producttype: number;
  install?: string;
}

export const MANAGE2_PRODUCT_TYPES = {
  cpanel: { producttype: 1, install: CPANEL_INSTALL_COMMAND },
  // A licence bought through Manage2 is an IP licence: the same guides as CLN's IP licences.
  cloudlinux: { producttype: 16, install: CLN_TYPES[1].install },
  kernelcare: { producttype: 32, install: CLN_TYPES[16].install },
  litespeed: { producttype: 128 },
  imunify360: { producttype: 256, install: CLN_TYPES[41].install },
  jetbackup: { producttype: 1024 },
} as const satisfies Partial<Record<ProductType, Manage2ProductLine>>;

export type Manage2ProductType = keyof typeof MANAGE2_PRODUCT_TYPES;

export function isManage2ProductType(type: string): type is Manage2ProductType {
  return Object.hasOwn(MANAGE2_PRODUCT_TYPES, type);
}
