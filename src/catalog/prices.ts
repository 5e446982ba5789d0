import type { Catalog } from "./catalog.js";
import { BUNDLES, isBundleId, MONTHLY_PRICE } from "../vocabulary/sandbox-prices.js";
import type { ProductType } from "../vocabulary/products.js";

/**
 * What a month of a licence costs the company. The reseller's API publishes no price list, so:
 * in sandbox mode the reseller sandbox's own table (what it charges), on a live bridge the
 * catalogue's `price_per_month`, set by the operator. A Manage2 or CLN product is priced by its
 * `price_per_month` in either mode (the bridge reads no price list of theirs). Null: not known.
 */
export interface PriceList {
  /** Where the prices come from, for the plan's reasons. */
  readonly source: "sandbox" | "catalogue";
  /** A month of the catalogue product `productId`. */
  product(productId: string): number | null;
  /** A month of a licence of `type` no product names (an orphan upstream). */
  licenseType(type: string): number | null;
}

const isProductType = (t: string): t is ProductType => Object.hasOwn(MONTHLY_PRICE, t);

export function sandboxPrices(catalog: Catalog): PriceList {
  return {
    source: "sandbox",
    product(id) {
      const p = catalog.product(id);
      if (!p) return null;
      if (p.provider !== "reseller") return p.pricePerMonth;
      if (p.kind === "bundle") return isBundleId(p.bundle) ? BUNDLES[p.bundle].monthly : null;
      return MONTHLY_PRICE[p.type];
    },
    licenseType: (type) => (isProductType(type) ? MONTHLY_PRICE[type] : null),
  };
}

export function cataloguePrices(catalog: Catalog): PriceList {
  // An orphan's type priced as the catalogue prices a reseller licence product of that type (the
  // first with a price): orphans are read from the reseller's list, and a CLN CloudLinux licence
  // costs what CLN asks, not what the reseller does.
  const byType = new Map<string, number>();
  for (const id of catalog.productIds()) {
    const p = catalog.product(id)!;
    if (p.kind === "licence" && p.provider === "reseller" && p.pricePerMonth !== null && !byType.has(p.type)) byType.set(p.type, p.pricePerMonth);
  }
  return {
    source: "catalogue",
    product: (id) => catalog.product(id)?.pricePerMonth ?? null,
    licenseType: (type) => byType.get(type) ?? null,
  };
}

/** The price list of a configuration: the sandbox's own in sandbox mode, else the catalogue's. */
export const pricesOf = (cfg: { sandbox: boolean; catalog: Catalog }): PriceList => (cfg.sandbox ? sandboxPrices(cfg.catalog) : cataloguePrices(cfg.catalog));

/** Money as the plan shows it: to the cent, free of float dust (12 * 0.1). */
export const money = (n: number): number => Math.round(n * 100) / 100;
