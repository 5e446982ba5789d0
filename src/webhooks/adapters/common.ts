import { createHash, timingSafeEqual } from "node:crypto";
import type { BillingCycle, Catalog } from "../../catalog/catalog.js";
import { sameIp } from "../../vocabulary/ip-address.js";
import type { TranslatedEvent } from "../route.js";
import { str } from "./field-maps.js";

/** Helpers the panel sources share to translate their deliveries into our events. */

const MONTHS_TO_CYCLE: Readonly<Record<number, BillingCycle>> = {
  1: "monthly",
  3: "quarterly",
  6: "semiannually",
  12: "annually",
  24: "biennially",
  36: "triennially",
};

/** A billing period in months (1, 3, 6, 12, 24, 36) as our cycle name. */
export function cycleFromMonths(months: number): BillingCycle | undefined {
  return Number.isInteger(months) ? MONTHS_TO_CYCLE[months] : undefined;
}

/** A whole count (months, years) sent as a number or a digit string; NaN otherwise. */
export function numberOrDigits(v: unknown): number {
  return typeof v === "number" ? v : typeof v === "string" && /^\d+$/.test(v) ? Number(v) : NaN;
}

/** Why a creation hook is ignored when its product (Blesta: package) is not in the catalogue; undefined otherwise. */
export function notInCatalogue(catalog: Catalog, productId: string | undefined, noun: "product" | "package" = "product"): string | undefined {
  return productId !== undefined && !catalog.product(productId) ? `${noun} ${productId} is not in the product catalogue (not a licence product)` : undefined;
}

export interface ServiceChanges {
  /** The delivery id; each event's id is `<delivery>:ip_changed` / `<delivery>:product_changed`. */
  delivery: string;
  /** The service id as the panel sent it. */
  serviceId: unknown;
  oldIp: string | undefined;
  /** The new IP as the panel sent it. */
  newIp: unknown;
  oldProduct: string | undefined;
  /** The new product id as the panel sent it. */
  newProduct: unknown;
  /** For the IP change; the product change is judged on both products. */
  ifUnknownService: "conflict" | "ignore";
}

/**
 * `service.ip_changed` and `service.product_changed`, in that order, from an update hook's old
 * and new values: each only when both values are known and differ.
 */
export function changeEvents(catalog: Catalog, c: ServiceChanges): TranslatedEvent[] {
  const events: TranslatedEvent[] = [];
  const newIp = str(c.newIp);
  if (newIp !== undefined && c.oldIp !== undefined && !sameIp(newIp, c.oldIp)) {
    events.push({
      webhookId: `${c.delivery}:ip_changed`,
      event: { type: "service.ip_changed", service: compact({ id: c.serviceId, ip: c.oldIp }), changes: { ip: c.newIp } },
      ifUnknownService: c.ifUnknownService,
    });
  }
  const newProduct = str(c.newProduct);
  if (newProduct !== undefined && c.oldProduct !== undefined && newProduct !== c.oldProduct) {
    events.push({
      webhookId: `${c.delivery}:product_changed`,
      event: { type: "service.product_changed", service: compact({ id: c.serviceId, product_id: c.oldProduct }), changes: { product_id: c.newProduct } },
      ifUnknownService: catalogueVerdict(catalog, [c.oldProduct, newProduct]) === "not_licence" ? "ignore" : "conflict",
    });
  }
  return events;
}

/**
 * Panels' dates as ISO 8601: "2026-02-01", "2026-02-01 10:00:00" (panels keep UTC; read as
 * UTC), "2026-02-01T10:00:00+02:00". An all-zero date (HostBill, Blesta) means none.
 */
export function normalizeDate(v: unknown): unknown {
  if (typeof v !== "string") return v;
  const s = v.trim();
  if (s === "" || /^0000-00-00/.test(s)) return undefined;
  const m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?$/.exec(s);
  if (m) return `${m[1]}T${m[2]}${m[3] ?? "Z"}`;
  return s;
}

/** What the catalogue says about the product ids a hook names. */
export function catalogueVerdict(catalog: Catalog, productIds: (string | undefined)[]): "licence" | "not_licence" | "unknown" {
  const given = productIds.filter((p): p is string => p !== undefined);
  if (given.length === 0) return "unknown";
  return given.some((p) => catalog.product(p) !== undefined) ? "licence" : "not_licence";
}

/** Drops undefined values (and an empty `customer`), so absent fields stay absent. */
export function compact<T extends Record<string, unknown>>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (v === undefined) continue;
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const inner = compact(v as Record<string, unknown>);
      if (Object.keys(inner).length === 0) continue;
      out[k] = inner;
    } else out[k] = v;
  }
  return out as T;
}

/** "First Last" from parts, or undefined. */
export function fullName(...parts: unknown[]): string | undefined {
  const s = parts
    .map((p) => (typeof p === "string" ? p.trim() : ""))
    .filter(Boolean)
    .join(" ");
  return s || undefined;
}

export function sha256Hex(...parts: (string | Buffer)[]): string {
  const h = createHash("sha256");
  for (const p of parts) h.update(p).update("\0");
  return h.digest("hex");
}

/** Every plausible decoding of a signature header value: hex, base64 or base64url. */
export function signatureCandidates(value: string): Buffer[] {
  let s = value.trim();
  const eq = /^(?:sha256|v1)[=,]/i.exec(s);
  if (eq) s = s.slice(eq[0].length);
  const out: Buffer[] = [];
  if (/^[0-9a-fA-F]+$/.test(s) && s.length % 2 === 0) out.push(Buffer.from(s, "hex"));
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(s)) out.push(Buffer.from(s.replace(/-/g, "+").replace(/_/g, "/"), "base64"));
  return out;
}

/** Constant-time: does any candidate equal any expected digest? */
export function anyDigestMatches(expected: readonly Buffer[], candidates: readonly Buffer[]): boolean {
  let ok = false;
  for (const e of expected) {
    for (const c of candidates) {
      if (c.length === e.length && timingSafeEqual(c, e)) ok = true;
    }
  }
  return ok;
}

/** Constant-time string equality of secrets of any length: compares their SHA-256 digests. */
export function secretEquals(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given, "utf8").digest();
  const b = createHash("sha256").update(expected, "utf8").digest();
  return timingSafeEqual(a, b);
}

/** A delivery id taken from a header or body: printable ASCII, at most 200 characters. */
export function deliveryId(v: unknown): string | undefined {
  const s = typeof v === "number" ? String(v) : typeof v === "string" ? v.trim() : undefined;
  return s && /^[\x21-\x7e]{1,200}$/.test(s) ? s : undefined;
}
