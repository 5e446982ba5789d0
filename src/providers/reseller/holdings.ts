import type { ListedLicense } from "../../reseller/answers.js";
import { LITESPEED_VARIANTS } from "../../vocabulary/products.js";
import type { Holding, HoldingState } from "../port.js";

/**
 * The reseller's licence list in the port's words. Its `status` is free text (the contract
 * shows none): a status that mentions a suspension is `suspended`; none at all, `active`, `ok`
 * or `enabled` is `active`; anything else (`expired` included: the reseller's unsuspend does
 * not bring back an expired licence, a renewal would) is `other`, for the operator.
 */
export function stateOf(status: string | undefined): HoldingState {
  if (status !== undefined && /suspend/i.test(status)) return "suspended";
  if (status === undefined || /^(active|ok|enabled)$/i.test(status.trim())) return "active";
  return "other";
}

const isLitespeedVariant = (v: string | undefined): v is string => (LITESPEED_VARIANTS as readonly string[]).includes(v ?? "");

export function isoToMs(iso: string | undefined): number | undefined {
  if (!iso) return undefined;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * One item of the list as a Holding. Only a LiteSpeed licence has a `variant` (and only one the
 * reseller sells: a list that shows none leaves it out, and the bridge reads it as the plain
 * one); its `detail` says what the list showed, for the history.
 */
export function holdingOf(l: ListedLicense): Holding {
  const h: Holding = { provider: "reseller", ip: l.ip, sku: l.type, type: l.type, state: stateOf(l.status) };
  if (l.status !== undefined) h.stateText = l.status;
  const expiresAt = isoToMs(l.expires_at);
  if (expiresAt !== undefined) h.expiresAt = expiresAt;
  if (l.type === "litespeed") {
    if (isLitespeedVariant(l.variant)) h.variant = l.variant;
    h.detail = l.variant ? `variant ${l.variant}` : "the list shows no variant: taken as litespeed";
  }
  if (l.bundle_key !== undefined) h.bundleKey = l.bundle_key;
  if (l.free !== undefined) h.free = l.free;
  return h;
}
