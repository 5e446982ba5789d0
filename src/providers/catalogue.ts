import type { Catalog, CatalogProduct } from "../catalog/catalog.js";
import { renderInstallCommand } from "../catalog/install-command.js";
import { JobFailedError } from "../jobs/errors.js";
import type { ProductRef, ProviderName } from "./port.js";

/**
 * What Manage2's and CLN's adapters read of the catalogue: the product a service was bought as
 * (its group, its install command's template) and what it sells there. The catalogue is asked
 * as it is now (a reload replaces it), so the adapters take a getter.
 */

export type CatalogueOf = () => Catalog | undefined;

/** The catalogue product `ref` names, when it is this provider's; else the first of this provider's products selling the same SKU. */
export function productOf(catalog: Catalog | undefined, provider: ProviderName, ref: Pick<ProductRef, "product_id" | "sku">): CatalogProduct | undefined {
  if (!catalog) return undefined;
  const named = ref.product_id === undefined ? undefined : catalog.product(ref.product_id);
  if (named?.provider === provider && (ref.sku === undefined || ref.sku === null || named.purchase.sku === ref.sku)) return named;
  if (ref.sku === undefined || ref.sku === null) return named?.provider === provider ? named : undefined;
  for (const id of catalog.productIds()) {
    const p = catalog.product(id)!;
    if (p.provider === provider && p.purchase.sku === ref.sku) return p;
  }
  return undefined;
}

/** What a product (or the service row made of one) is bought as at `provider`: the row's `sku`, else its catalogue product's. */
export function skuOf(catalog: Catalog | undefined, provider: ProviderName, ref: ProductRef): string {
  const sku = ref.sku ?? productOf(catalog, provider, ref)?.purchase.sku;
  if (!sku) throw new JobFailedError(`no ${provider} SKU is known for product ${ref.product_id ?? "(none)"}: the catalogue has no such ${provider} product any more`);
  return sku;
}

/** The install command of the licence at `ip`: the catalogue product's template, else `fallback` (the vendor guide's), else an error naming the product. */
export function installCommandOf(catalog: Catalog | undefined, provider: ProviderName, ip: string, ref: Pick<ProductRef, "product_id" | "sku">, fallback: string | null): string {
  const template = productOf(catalog, provider, ref)?.installCommand ?? fallback;
  if (!template) {
    throw new JobFailedError(
      `no install command is known for product ${ref.product_id ?? ref.sku ?? "(none)"} of ${provider}: give the catalogue product an install_command ({ip} for the licence's IP)`,
    );
  }
  return renderInstallCommand(template, ip);
}
