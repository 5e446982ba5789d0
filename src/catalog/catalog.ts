import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import {
  BILLING_CYCLE_MONTHS,
  billingCycleMonthsSchema,
  bundleIdSchema,
  litespeedVariantSchema,
  productTypeSchema,
  type BillingCycleMonths,
  type LitespeedVariant,
  type ProductType,
} from "../vocabulary/products.js";
import { BILLING_CYCLES, type BillingCycle } from "./billing-cycles.js";

export { BILLING_CYCLES, type BillingCycle };
export const billingCycleSchema = z.enum(BILLING_CYCLES);

export const DEFAULT_BILLING_CYCLES: Readonly<Record<BillingCycle, BillingCycleMonths>> = {
  monthly: 1,
  quarterly: 3,
  semiannually: 6,
  annually: 12,
  biennially: 24,
  triennially: 36,
};

const maxIpChanges = z.number().int().nonnegative().optional();

const licenseProductSchema = z
  .strictObject({
    type: productTypeSchema,
    variant: litespeedVariantSchema.optional(),
    max_ip_changes: maxIpChanges,
  })
  .refine((p) => p.variant === undefined || p.type === "litespeed", {
    message: "variant is only for type litespeed",
    path: ["variant"],
  });

const bundleProductSchema = z.strictObject({
  bundle: bundleIdSchema,
  max_ip_changes: maxIpChanges,
});

export const catalogFileSchema = z.strictObject({
  billing_cycles: z
    .strictObject(
      Object.fromEntries(BILLING_CYCLES.map((c) => [c, billingCycleMonthsSchema.optional()])) as Record<
        BillingCycle,
        z.ZodOptional<typeof billingCycleMonthsSchema>
      >,
    )
    .optional(),
  products: z.record(
    z.string().min(1).max(64),
    z.union([licenseProductSchema, bundleProductSchema], {
      error: 'must be {"type": <product type>, "variant"?, "max_ip_changes"?} or {"bundle": <bundle id>}',
    }),
  ),
});

/** What one billing-panel product buys upstream. */
export type CatalogProduct =
  | { kind: "licence"; productId: string; type: ProductType; variant: LitespeedVariant | null; maxIpChanges: number | null }
  | { kind: "bundle"; productId: string; bundle: string; maxIpChanges: number | null };

export interface Catalog {
  product(productId: string): CatalogProduct | undefined;
  months(cycle: BillingCycle): BillingCycleMonths;
  productIds(): string[];
}

export function createCatalog(file: z.infer<typeof catalogFileSchema>): Catalog {
  const cycles: Record<BillingCycle, BillingCycleMonths> = { ...DEFAULT_BILLING_CYCLES, ...stripUndefined(file.billing_cycles ?? {}) };
  const products = new Map<string, CatalogProduct>();
  for (const [productId, p] of Object.entries(file.products)) {
    products.set(
      productId,
      "bundle" in p
        ? { kind: "bundle", productId, bundle: p.bundle, maxIpChanges: p.max_ip_changes ?? null }
        : {
            kind: "licence",
            productId,
            type: p.type,
            // A litespeed product without a variant is the 2-core one the upstream sells by default.
            variant: p.type === "litespeed" ? (p.variant ?? "litespeed") : null,
            maxIpChanges: p.max_ip_changes ?? null,
          },
    );
  }
  return {
    product: (id) => products.get(id),
    months: (cycle) => cycles[cycle],
    productIds: () => [...products.keys()],
  };
}

/** The catalogue shipped with the code: `config/products.json` at the package root (from src/ or dist/). */
export const SHIPPED_CATALOG_FILE = resolve(dirname(fileURLToPath(import.meta.url)), "../../config/products.json");

export type CatalogLoadResult = { ok: true; catalog: Catalog } | { ok: false; problems: string[] };

/** Reads and validates a catalogue file; problems are "<path>: <message>" lines. */
export function loadCatalog(path: string): CatalogLoadResult {
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
  const parsed = catalogFileSchema.safeParse(json);
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`),
    };
  }
  return { ok: true, catalog: createCatalog(parsed.data) };
}

function stripUndefined<T extends object>(o: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as never;
}

export { BILLING_CYCLE_MONTHS };
