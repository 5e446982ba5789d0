import type { ListedLicense } from "../reseller/answers.js";
import { canonicalIp as canonical } from "../vocabulary/ip-address.js";

/** How reconcile reads the reseller's licence list. */

/** An IP as one spelling, so that 2001:db8::1 and 2001:0db8:0:0::1 match; as written when it is no IP. */
export const canonicalIp = (ip: string): string => canonical(ip) ?? ip;

/** The upstream status as the bridge names it; undefined when the list does not say. */
export function upstreamStatus(l: ListedLicense): string | undefined {
  const s = l.status?.trim().toLowerCase();
  if (!s) return undefined;
  if (s.includes("suspend")) return "suspended";
  return s;
}
