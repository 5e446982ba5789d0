import { describe, expect, it } from "vitest";
import { newEventId, newLicenseKey } from "../../src/store/ids.js";

describe("ids", () => {
  it("licence keys keep their format and sort by the time they were made", () => {
    const t = Date.UTC(2026, 0, 1);
    const keys = Array.from({ length: 50 }, (_, i) => newLicenseKey(t + i));
    for (const key of keys) expect(key).toMatch(/^lb_[0-9a-f]{24}$/);
    // Sorted keys: the unique index on them grows at its end, as the other indexes of an order
    // do, instead of dirtying a random page per order (a commit writes every page it changed).
    expect([...keys].sort()).toEqual(keys);
    expect(newLicenseKey(Date.UTC(2100, 0, 1)) > keys.at(-1)!).toBe(true);
  });

  it("licence keys made in the same millisecond differ", () => {
    const now = Date.now();
    const keys = new Set(Array.from({ length: 1000 }, () => newLicenseKey(now)));
    expect(keys.size).toBe(1000);
  });

  it("event ids sort by time", () => {
    const t = Date.UTC(2026, 0, 1);
    expect(newEventId(t) < newEventId(t + 1)).toBe(true);
  });
});
