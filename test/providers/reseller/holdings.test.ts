import { describe, expect, it } from "vitest";
import { holdingOf, stateOf } from "../../../src/providers/reseller/holdings.js";

// The reseller's licence list in the port's words: its free-text status strings as a state,
// a LiteSpeed licence's variant, the expiry, the bundle key and free companions.

describe("the reseller's status strings as a holding's state", () => {
  it("a status that mentions a suspension is suspended, whatever else it says", () => {
    for (const status of ["suspended", "Suspended", "SUSPENDED by admin", "auto-suspend"]) expect(stateOf(status)).toBe("suspended");
  });

  it("no status, or active, ok or enabled in any case and padding, is active", () => {
    for (const status of [undefined, "active", "Active", " OK ", "enabled"]) expect(stateOf(status)).toBe("active");
  });

  it("any other status is other, expired included: the reseller's unsuspend does not bring one back", () => {
    for (const status of ["expired", "pending", "cancelled", "", "active-ish"]) expect(stateOf(status)).toBe("other");
  });

  it("a holding keeps the status in the reseller's words beside its state", () => {
    expect(holdingOf({ ip: "203.0.113.5", type: "cpanel", status: "Expired" })).toMatchObject({ state: "other", stateText: "Expired" });
  });
});

describe("a listed licence as a holding", () => {
  it("is the reseller's, its type both what is sold and what people see, its expiry in milliseconds", () => {
    expect(holdingOf({ ip: "203.0.113.5", type: "cpanel", status: "active", expires_at: "2027-01-01T00:00:00.000Z" })).toEqual({
      provider: "reseller",
      ip: "203.0.113.5",
      sku: "cpanel",
      type: "cpanel",
      state: "active",
      stateText: "active",
      expiresAt: Date.parse("2027-01-01T00:00:00.000Z"),
    });
  });

  it("an expiry that does not parse is no expiry", () => {
    expect(holdingOf({ ip: "203.0.113.5", type: "cpanel", expires_at: "soon" })).not.toHaveProperty("expiresAt");
  });

  it("a LiteSpeed licence carries its variant, and the history's words for it", () => {
    expect(holdingOf({ ip: "203.0.113.5", type: "litespeed", variant: "litespeed8" })).toMatchObject({ variant: "litespeed8", detail: "variant litespeed8" });
  });

  it("a LiteSpeed licence listed without a variant has none, and is said to be taken as the plain one", () => {
    const h = holdingOf({ ip: "203.0.113.5", type: "litespeed" });
    expect(h).not.toHaveProperty("variant");
    expect(h.detail).toBe("the list shows no variant: taken as litespeed");
  });

  it("a variant the reseller does not sell is no variant, though the history shows what was listed", () => {
    const h = holdingOf({ ip: "203.0.113.5", type: "litespeed", variant: "litespeed16" });
    expect(h).not.toHaveProperty("variant");
    expect(h.detail).toBe("variant litespeed16");
  });

  it("only a LiteSpeed licence has a variant", () => {
    const h = holdingOf({ ip: "203.0.113.5", type: "cpanel", variant: "litespeed4" });
    expect(h).not.toHaveProperty("variant");
    expect(h).not.toHaveProperty("detail");
  });

  it("keeps the bundle key, and marks a free companion", () => {
    expect(holdingOf({ ip: "203.0.113.5", type: "cpanel", bundle_key: "bk-1" })).toMatchObject({ bundleKey: "bk-1" });
    expect(holdingOf({ ip: "203.0.113.5", type: "softaculous", free: true })).toMatchObject({ free: true });
  });
});
