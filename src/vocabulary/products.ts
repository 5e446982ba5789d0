import { z } from "zod";
import { canonicalIp } from "./ip-address.js";

/** Product type identifiers the reseller sells (reseller-api.md, "What the service does" 6). */
export const PRODUCT_TYPES = [
  "cpanel",
  "litespeed",
  "cloudlinux",
  "imunify360",
  "wp2",
  "softaculous",
  "sitepad",
  "plesk",
  "virtualizor",
  "jetbackup",
  "kernelcare",
  "backuply",
  "webuzo",
  "whmreseller",
  "whmsonic",
  "directadmin",
  "dareseller",
  "osm",
  "cxs",
  "cpguard",
] as const;
export type ProductType = (typeof PRODUCT_TYPES)[number];
export const productTypeSchema = z.enum(PRODUCT_TYPES);

/**
 * LiteSpeed core variants. The upstream sells every LiteSpeed licence as `litespeed`
 * (2 cores) and moves it to another variant with change-core.
 */
export const LITESPEED_VARIANTS = ["litespeed", "litespeed4", "litespeed8", "litespeedX"] as const;
export type LitespeedVariant = (typeof LITESPEED_VARIANTS)[number];
export const litespeedVariantSchema = z.enum(LITESPEED_VARIANTS);

/** v2's `core` numbers for the same four variants; 9 is XCore. */
export const CORE_BY_VARIANT: Readonly<Record<LitespeedVariant, 2 | 4 | 8 | 9>> = {
  litespeed: 2,
  litespeed4: 4,
  litespeed8: 8,
  litespeedX: 9,
};
export const VARIANT_BY_CORE: Readonly<Record<2 | 4 | 8 | 9, LitespeedVariant>> = {
  2: "litespeed",
  4: "litespeed4",
  8: "litespeed8",
  9: "litespeedX",
};
export const coreSchema = z.union([z.literal(2), z.literal(4), z.literal(8), z.literal(9)]);

/** Free licences that come with a cpanel licence and follow its renewals and IP changes. */
export const CPANEL_COMPANIONS = ["softaculous", "sitepad", "ssl"] as const;
export type Companion = (typeof CPANEL_COMPANIONS)[number];

/** Upstream `billingcycle` is a number of months. */
export const BILLING_CYCLE_MONTHS = [1, 3, 6, 12, 24, 36] as const;
export type BillingCycleMonths = (typeof BILLING_CYCLE_MONTHS)[number];
export const billingCycleMonthsSchema = z.union(
  BILLING_CYCLE_MONTHS.map((m) => z.literal(m)) as unknown as [
    z.ZodLiteral<1>,
    z.ZodLiteral<3>,
    z.ZodLiteral<6>,
    z.ZodLiteral<12>,
    z.ZodLiteral<24>,
    z.ZodLiteral<36>,
  ],
  { error: "must be one of 1, 3, 6, 12, 24, 36 (months)" },
);

/**
 * An IPv4 or IPv6 address, parsed to its one canonical spelling (see ip-address.ts), so that
 * whatever reads it (the database, upstream calls, the admin API) sees one form per address.
 */
export const ipSchema = z
  .union([z.ipv4(), z.ipv6()], { error: "must be an IPv4 or IPv6 address" })
  .transform((s, ctx) => {
    const ip = canonicalIp(s);
    if (ip === undefined) {
      ctx.addIssue({ code: "custom", message: "must be an IPv4 or IPv6 address" });
      return z.NEVER;
    }
    return ip;
  });

export const positiveAmountSchema = z.number().finite().positive({ error: "must be a positive number" });

/** Bundles the sandbox sells; the real catalogue is not documented, so the bridge accepts any id. */
export const bundleIdSchema = z.string().min(1).max(100);
