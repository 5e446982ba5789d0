import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { BILLING_CYCLE_MONTHS, billingCycleMonthsSchema, type BillingCycleMonths } from "../vocabulary/products.js";
import type { ProviderName } from "../vocabulary/providers.js";
import { BILLING_CYCLES, type BillingCycle } from "./billing-cycles.js";
import { parseProduct, type CatalogProduct, type ProductDefaults } from "./product.js";

export { BILLING_CYCLES, type BillingCycle };
export type { CatalogProduct, ClnPurchase, Manage2Purchase, ProductDefaults, Purchase, ResellerPurchase } from "./product.js";
export const billingCycleSchema = z.enum(BILLING_CYCLES);

export const DEFAULT_BILLING_CYCLES: Readonly<Record<BillingCycle, BillingCycleMonths>> = {
  monthly: 1,
  quarterly: 3,
  semiannually: 6,
  annually: 12,
  biennially: 24,
  triennially: 36,
};

export const catalogFileSchema = z.strictObject({
  billing_cycles: z
    .strictObject(
      Object.fromEntries(BILLING_CYCLES.map((c) => [c, billingCycleMonthsSchema.optional()])) as Record<
        BillingCycle,
        z.ZodOptional<typeof billingCycleMonthsSchema>
      >,
    )
    .optional(),
  // Each product is checked field by field (product.ts), so its problems are a line each.
  products: z.record(z.string().min(1).max(64), z.unknown()),
});

export type CatalogFile = z.input<typeof catalogFileSchema>;

export interface Catalog {
  product(productId: string): CatalogProduct | undefined;
  months(cycle: BillingCycle): BillingCycleMonths;
  productIds(): string[];
}

/** "<path>: <message>" lines, one per problem, or the catalogue. */
export type CatalogParseResult = { ok: true; catalog: Catalog } | { ok: false; problems: string[] };

/** Checks a catalogue's content (a file's JSON) and builds it; every problem at once. */
export function parseCatalog(json: unknown, defaults: ProductDefaults = {}): CatalogParseResult {
  const parsed = catalogFileSchema.safeParse(json);
  if (!parsed.success) {
    return { ok: false, problems: parsed.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`) };
  }
  const problems: string[] = [];
  const products = new Map<string, CatalogProduct>();
  for (const [productId, raw] of Object.entries(parsed.data.products)) {
    const { product, issues } = parseProduct(productId, raw, defaults);
    for (const issue of issues) problems.push(`${["products", productId, ...issue.path].join(".")}: ${issue.message}`);
    if (product) products.set(productId, product);
  }
  if (problems.length) return { ok: false, problems };
  const cycles: Record<BillingCycle, BillingCycleMonths> = { ...DEFAULT_BILLING_CYCLES, ...stripUndefined(parsed.data.billing_cycles ?? {}) };
  return {
    ok: true,
    catalog: {
      product: (id) => products.get(id),
      months: (cycle) => cycles[cycle],
      productIds: () => [...products.keys()],
    },
  };
}

/** A catalogue known to be valid (tests, built-in ones); throws with every problem otherwise. */
export function createCatalog(file: CatalogFile, defaults: ProductDefaults = {}): Catalog {
  const result = parseCatalog(file, defaults);
  if (!result.ok) throw new Error(`invalid catalogue:\n${result.problems.join("\n")}`);
  return result.catalog;
}

/** The catalogue shipped with the code: `config/products.json` at the package root (from src/ or dist/). */
export const SHIPPED_CATALOG_FILE = resolve(dirname(fileURLToPath(import.meta.url)), "../../config/products.json");

export type CatalogLoadResult = CatalogParseResult;

/** Reads and validates a catalogue file; problems are "<path>: <message>" lines. */
export function loadCatalog(path: string, defaults: ProductDefaults = {}): CatalogLoadResult {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    return { ok: false, problems: [`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`] };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, problems: [`${path} is not valid JSON: ${(err as Error).message}`] };
  }
  return parseCatalog(json, defaults);
}

/** Which providers the catalogue buys from, with the ids of their products, in the catalogue's order. */
export function productsByProvider(catalog: Catalog): Map<ProviderName, string[]> {
  const out = new Map<ProviderName, string[]>();
  for (const id of catalog.productIds()) {
    const provider = catalog.product(id)!.provider;
    out.set(provider, [...(out.get(provider) ?? []), id]);
  }
  return out;
}

function stripUndefined<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as never;
}

export { BILLING_CYCLE_MONTHS };
