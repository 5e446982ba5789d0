import { z } from "zod";
import { CLN_TYPES, CLN_TYPE_NUMBERS, isClnType, type ClnType } from "../vocabulary/cln-types.js";
import { MANAGE2_PRODUCT_TYPES, isManage2ProductType } from "../vocabulary/manage2-products.js";
import { bundleIdSchema, litespeedVariantSchema, productTypeSchema, type LitespeedVariant, type ProductType } from "../vocabulary/products.js";
import { DEFAULT_PROVIDER, PROVIDER_NAMES, type ProviderName } from "../vocabulary/providers.js";
import { clnDefaultInstall, installTemplateProblem, manage2DefaultInstall } from "./install-command.js";

/**
 * One catalogue product as the operator writes it, checked field by field: every problem is its
 * own line naming the product and the field (`products.40.package_id: ...`), never one line for
 * the whole entry, so a catalogue with three mistakes is fixed in one go.
 */

/**
 * What a product is bought as at its provider: the provider port's SKU, and with it what the
 * provider needs to buy it. `sku` is the part of the identity (provider, IP, sku) that says what
 * is held: the reseller's licence type (or bundle id), Manage2's package id (its group is where
 * the licence is filed, not what it is), CLN's licence type number.
 */
export type Purchase = ResellerPurchase | Manage2Purchase | ClnPurchase;

export interface ResellerPurchase {
  provider: "reseller";
  /** The licence type, or the bundle id when `bundle`. */
  sku: string;
  bundle: boolean;
  /** A LiteSpeed licence's cores; null for every other product. */
  variant: LitespeedVariant | null;
}

export interface Manage2Purchase {
  provider: "manage2";
  /** The package id, as text. */
  sku: string;
  packageId: number;
  /** The product's `group_id`, else MANAGE2_GROUP_ID; null: the account's default group (XMLlicenseAdd without `groupid`). */
  groupId: number | null;
}

export interface ClnPurchase {
  provider: "cln";
  /** The CLN type, as text. */
  sku: string;
  clnType: ClnType;
}

interface ProductCommon {
  productId: string;
  /** Who sells it; always `purchase.provider`. */
  provider: ProviderName;
  purchase: Purchase;
  maxIpChanges: number | null;
  /** What a month costs the company, where the provider publishes no price list (forecast, adoption). */
  pricePerMonth: number | null;
  /**
   * Manage2 and CLN: the install command's template (`{ip}` for the licence's IP), the catalogue's
   * or the vendor guide's; null when neither gives one. The reseller's comes from its API: null.
   */
  installCommand: string | null;
}

/** What one billing-panel product buys. */
export type CatalogProduct =
  | (ProductCommon & { kind: "licence"; type: ProductType; variant: LitespeedVariant | null })
  | (ProductCommon & { kind: "bundle"; bundle: string });

export interface ProductDefaults {
  /** MANAGE2_GROUP_ID: the group of a Manage2 product without `group_id`. */
  manage2GroupId?: number;
}

export interface ProductIssue {
  /** Below the product: the field, or nothing for the entry as a whole. */
  path: string[];
  message: string;
}

const PROVIDER_FIELDS: Readonly<Record<ProviderName, readonly string[]>> = {
  reseller: ["variant", "bundle"],
  manage2: ["package_id", "group_id", "install_command"],
  cln: ["cln_type", "install_command"],
};
const COMMON_FIELDS: readonly string[] = ["provider", "type", "max_ip_changes", "price_per_month"];
const ALL_FIELDS = [...new Set([...COMMON_FIELDS, ...Object.values(PROVIDER_FIELDS).flat()])];

const providerSchema = z.enum(PROVIDER_NAMES, { error: `must be one of ${PROVIDER_NAMES.join(", ")} (unset: reseller)` });
const maxIpChangesSchema = z.number({ error: "must be a whole number, 0 or more" }).int({ error: "must be a whole number, 0 or more" }).nonnegative({ error: "must be a whole number, 0 or more" });
const pricePerMonthSchema = z.number({ error: "must be a number" }).finite().nonnegative({ error: "must be zero or more" });

/** A Manage2 id as the catalogue may write it: a number, or its digits with or without the letter Manage2 puts before them (P12345, G678). */
function manage2IdSchema(letter: "P" | "G", what: string) {
  const digits = new RegExp(`^${letter}?0*([1-9]\\d{0,14})$`);
  const error = `must be a Manage2 ${what} id, a whole number such as ${letter === "P" ? "12345" : "678"} (or ${letter}${letter === "P" ? "12345" : "678"})`;
  return z.union(
    [z.number().int({ error }).positive({ error }).max(Number.MAX_SAFE_INTEGER, { error }), z.string().trim().regex(digits, { error }).transform((s) => Number(digits.exec(s)![1]))],
    { error },
  );
}
const packageIdSchema = manage2IdSchema("P", "package");
export const manage2GroupIdSchema = manage2IdSchema("G", "group");

const clnTypeSchema = z
  .union([z.number().int(), z.string().trim().regex(/^\d{1,9}$/).transform(Number)], { error: "must be a CLN licence type number, e.g. 1 or 41" })
  .refine((n): n is ClnType => isClnType(n), { error: `is not a CLN IP licence type (CloudLinux's list: ${CLN_TYPE_NUMBERS.join(", ")})` });

const installCommandSchema = z.string({ error: "must be text: the install command, {ip} standing for the licence's IP" }).superRefine((s, ctx) => {
  const problem = installTemplateProblem(s);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

/** Why `field` does not belong on a product of `provider`. */
function foreignField(field: string, provider: ProviderName, owners: readonly ProviderName[]): string {
  if (field === "variant") return `LiteSpeed variants are the reseller's only (a ${provider} product's ${provider === "manage2" ? "package_id" : "cln_type"} says what it is)`;
  if (field === "bundle") return `bundles are the reseller's only (a ${provider} product is one licence)`;
  if (field === "install_command") return "is only for providers manage2 and cln (the reseller's API gives the install command)";
  return `is only for provider ${owners.join(" and ")} (this product's provider is ${provider})`;
}

/** The CLN types whose product is `type`, for a hint. */
const clnTypesOf = (type: string) => CLN_TYPE_NUMBERS.filter((n) => (CLN_TYPES[n] as { productType?: string }).productType === type);

export interface ParsedProduct {
  product: CatalogProduct | null;
  issues: ProductIssue[];
}

/** `raw`, the catalogue's entry for `productId`, as a product, or every problem it has. */
export function parseProduct(productId: string, raw: unknown, defaults: ProductDefaults = {}): ParsedProduct {
  const issues: ProductIssue[] = [];
  const add = (field: string | null, message: string) => issues.push({ path: field === null ? [] : [field], message });
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    add(null, 'must be an object, e.g. {"type": "cpanel"}, {"bundle": "cpanel-cloudlinux"} or {"provider": "cln", "type": "cloudlinux", "cln_type": 1}');
    return { product: null, issues };
  }
  const entry = raw as Record<string, unknown>;
  const given = (name: string) => entry[name] !== undefined;
  function field<T>(name: string, schema: z.ZodType<T>): T | undefined {
    if (!given(name)) return undefined;
    const parsed = schema.safeParse(entry[name]);
    if (parsed.success) return parsed.data;
    add(name, parsed.error.issues[0]!.message);
    return undefined;
  }

  const provider = given("provider") ? field("provider", providerSchema) : DEFAULT_PROVIDER;
  for (const key of Object.keys(entry)) {
    if (COMMON_FIELDS.includes(key)) continue;
    const owners = PROVIDER_NAMES.filter((p) => PROVIDER_FIELDS[p].includes(key));
    if (owners.length === 0) add(key, `is not a catalogue field (one of ${ALL_FIELDS.join(", ")})`);
    else if (provider !== undefined && !owners.includes(provider)) add(key, foreignField(key, provider, owners));
  }
  const type = field("type", productTypeSchema);
  const common = {
    productId,
    maxIpChanges: field("max_ip_changes", maxIpChangesSchema) ?? null,
    pricePerMonth: field("price_per_month", pricePerMonthSchema) ?? null,
  };
  // An unreadable provider: its fields cannot be judged, but the common ones were.
  if (provider === undefined) return { product: null, issues };
  const needsType = () => {
    if (!given("type")) add("type", `is required: what the customer gets, e.g. "${provider === "cln" ? "cloudlinux" : "cpanel"}"`);
  };

  let product: CatalogProduct | null = null;
  if (provider === "reseller") {
    const variant = field("variant", litespeedVariantSchema);
    const bundle = field("bundle", bundleIdSchema);
    if (given("type") && given("bundle")) add("bundle", 'cannot stand beside "type": a product is one licence type or one bundle');
    else if (!given("type") && !given("bundle")) add(null, 'needs "type" (a licence type) or "bundle" (a bundle id)');
    else if (given("variant") && type !== undefined && type !== "litespeed") add("variant", "variant is only for type litespeed");
    else if (given("variant") && given("bundle")) add("variant", "variant is only for type litespeed");
    if (bundle !== undefined) {
      product = { kind: "bundle", ...common, provider, bundle, purchase: { provider, sku: bundle, bundle: true, variant: null }, installCommand: null };
    } else if (type !== undefined) {
      // A litespeed product without a variant is the 2-core one the reseller sells by default.
      const cores = type === "litespeed" ? (variant ?? "litespeed") : null;
      product = { kind: "licence", ...common, provider, type, variant: cores, purchase: { provider, sku: type, bundle: false, variant: cores }, installCommand: null };
    }
  } else if (provider === "manage2") {
    needsType();
    if (type !== undefined && !isManage2ProductType(type)) {
      add("type", `is not sold through cPanel's Manage2 (the bridge's types it sells: ${Object.keys(MANAGE2_PRODUCT_TYPES).join(", ")})`);
    }
    const packageId = field("package_id", packageIdSchema);
    if (!given("package_id")) add("package_id", "is required for provider manage2: the Manage2 package to buy, e.g. 12345");
    const groupId = field("group_id", manage2GroupIdSchema);
    const install = field("install_command", installCommandSchema);
    if (type !== undefined && packageId !== undefined) {
      product = {
        kind: "licence",
        ...common,
        provider,
        type,
        variant: null,
        purchase: { provider, sku: String(packageId), packageId, groupId: groupId ?? defaults.manage2GroupId ?? null },
        installCommand: install ?? manage2DefaultInstall(type),
      };
    }
  } else {
    needsType();
    const clnType = field("cln_type", clnTypeSchema);
    if (!given("cln_type")) add("cln_type", "is required for provider cln: the CLN licence type to buy, e.g. 1 (CloudLinux OS) or 41 (Imunify360)");
    const install = field("install_command", installCommandSchema);
    if (clnType !== undefined && type !== undefined) {
      const info = CLN_TYPES[clnType] as { name: string; productType?: ProductType };
      if (info.productType === undefined) {
        add("cln_type", `${clnType} is ${info.name}, which is no product type of the bridge yet`);
      } else if (info.productType !== type) {
        const fitting = clnTypesOf(type);
        add(
          "cln_type",
          `${clnType} is ${info.name}, of type ${info.productType}, but this product's type is "${type}": give type "${info.productType}"` +
            (fitting.length ? `, or a ${type} cln_type (${fitting.join(", ")})` : ` (CLN sells no ${type} licence)`),
        );
      }
    }
    if (clnType !== undefined && type !== undefined) {
      product = {
        kind: "licence",
        ...common,
        provider,
        type,
        variant: null,
        purchase: { provider, sku: String(clnType), clnType },
        installCommand: install ?? clnDefaultInstall(clnType),
      };
    }
  }
  return issues.length ? { product: null, issues } : { product, issues };
}
