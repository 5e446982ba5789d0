import { randomUUID } from "node:crypto";

/** Time-ordered and unique; randomUUID draws from a cached entropy pool, randomBytes would not. */
export function newEventId(nowMs: number): string {
  return `evt_${nowMs.toString(36)}${randomUUID().slice(0, 13).replace("-", "")}`;
}

/**
 * "lb_" and 24 hex digits: the time in milliseconds (11 digits, good until the year 2527), then
 * 52 random bits. Time first, so keys sort in the order they were made and the unique index on
 * them grows at its end like the order's other rows; random keys dirtied one more page of it per
 * order, and every commit writes each page it changed. The key names a licence to callers that
 * hold the provisioning token; it is not itself a secret.
 */
export function newLicenseKey(nowMs: number): string {
  const random = randomUUID().replaceAll("-", "");
  // Hex digit 12 of a UUID is its version ("4"), not random.
  return `lb_${Math.max(0, Math.floor(nowMs)).toString(16).padStart(11, "0")}${random.slice(0, 12)}${random[13]}`;
}
