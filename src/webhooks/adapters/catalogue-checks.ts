import type { Catalog } from "../../catalog/catalog.js";

/** Why a creation hook is ignored when its product (Blesta: package) is not in the catalogue; undefined otherwise. */
export function notInCatalogue(catalog: Catalog, productId: string | undefined, noun: "product" | "package" = "product"): string | undefined {
  return productId !== undefined && !catalog.product(productId) ? `${noun} ${productId} is not in the product catalogue (not a licence product)` : undefined;
}

/** What the catalogue says about the product ids a hook names. */
export function catalogueVerdict(catalog: Catalog, productIds: (string | undefined)[]): "licence" | "not_licence" | "unknown" {
  const given = productIds.filter((p): p is string => p !== undefined);
  if (given.length === 0) return "unknown";
  return given.some((p) => catalog.product(p) !== undefined) ? "licence" : "not_licence";
}
