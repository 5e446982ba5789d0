import { describe, expect, it } from "vitest";
import { isMovedLicence } from "../../src/lifecycle/provider-steps.js";
import type { Holding } from "../../src/providers/port.js";

// After a lost answer to a change of IP, the new IP's list says whether the licence moved. The
// reseller's status is free text: anything but active or suspended is "other" (stateOf), and a
// licence listed so at the new IP moved all the same.

const at = (h: Partial<Holding>): Holding => ({ provider: "reseller", ip: "203.0.113.41", sku: "cpanel", type: "cpanel", state: "active", ...h });

describe("the licence a change of IP moved, found at the new IP", () => {
  it("is the reseller's licence of the type in a status the bridge does not name", () => {
    expect(isMovedLicence(at({ state: "other", stateText: "pending_verification" }), { sku: "cpanel" })).toBe(true);
  });

  it("is the reseller's suspended licence of the type", () => {
    expect(isMovedLicence(at({ state: "suspended" }), { sku: "cpanel" })).toBe(true);
  });

  it("is not an expired licence of the type where the service records no licence id (another service left it there)", () => {
    expect(isMovedLicence(at({ provider: "cln", sku: "1", state: "expired" }), { sku: "1" })).toBe(false);
  });

  it("is not a licence of another type", () => {
    expect(isMovedLicence(at({ sku: "whmcs" }), { sku: "cpanel" })).toBe(false);
  });

  it("is the service's own licence by its id, in any state", () => {
    expect(isMovedLicence(at({ provider: "manage2", sku: "12345", upstreamId: "77", state: "other", stateText: "suspended by cPanel" }), { sku: "12345", upstreamId: "77" })).toBe(true);
  });

  it("is not another licence of the package where the service records its own id, whatever its state", () => {
    expect(isMovedLicence(at({ provider: "manage2", sku: "12345", upstreamId: "78", state: "active" }), { sku: "12345", upstreamId: "77" })).toBe(false);
  });
});
