import type { ProductType } from "../vocabulary/products.js";

/**
 * Monthly prices the sandbox charges. The real price list is private; these only need to
 * be plausible and distinct enough that a test can tell from an amount what was bought.
 */
export const MONTHLY_PRICE: Readonly<Record<ProductType, number>> = {
  cpanel: 15,
  litespeed: 10,
  cloudlinux: 12,
  imunify360: 8,
  wp2: 5,
  softaculous: 3,
  sitepad: 4,
  plesk: 12,
  virtualizor: 6,
  jetbackup: 7,
  kernelcare: 3,
  backuply: 2,
  webuzo: 5,
  whmreseller: 9,
  whmsonic: 4,
  directadmin: 6,
  dareseller: 10,
  osm: 2,
  cxs: 7,
  cpguard: 4,
};

export interface BundleOffer {
  types: readonly ProductType[];
  monthly: number;
}

/** The upstream does not document its bundle ids, so the sandbox invents a small catalogue. */
export const BUNDLES = {
  "cpanel-cloudlinux": { types: ["cpanel", "cloudlinux"], monthly: 25 },
  "cpanel-litespeed": { types: ["cpanel", "litespeed"], monthly: 22 },
  "cpanel-imunify360": { types: ["cpanel", "imunify360"], monthly: 20 },
} as const satisfies Record<string, BundleOffer>;

export type BundleId = keyof typeof BUNDLES;

export function isBundleId(value: string): value is BundleId {
  return Object.hasOwn(BUNDLES, value);
}

export function licensePrice(type: ProductType, months: number): number {
  return MONTHLY_PRICE[type] * months;
}

export function bundlePrice(bundle: BundleId, months: number): number {
  return BUNDLES[bundle].monthly * months;
}
