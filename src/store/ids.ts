import { randomUUID } from "node:crypto";

/** Time-ordered and unique; randomUUID draws from a cached entropy pool, randomBytes would not. */
export function newEventId(nowMs: number): string {
  return `evt_${nowMs.toString(36)}${randomUUID().slice(0, 13).replace("-", "")}`;
}

/** 92 random bits: a licence key says nothing about the service and cannot be guessed. */
export function newLicenseKey(): string {
  return `lb_${randomUUID().replaceAll("-", "").slice(0, 24)}`;
}
