import type { BillingCycle } from "../../catalog/catalog.js";

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

/** A delivery id taken from a header or body: printable ASCII, at most 200 characters. */
export function deliveryId(v: unknown): string | undefined {
  const s = typeof v === "number" ? String(v) : typeof v === "string" ? v.trim() : undefined;
  return s && /^[\x21-\x7e]{1,200}$/.test(s) ? s : undefined;
}
