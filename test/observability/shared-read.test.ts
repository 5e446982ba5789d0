import { describe, expect, it } from "vitest";
import { sharedRead } from "../../src/observability/shared-read.js";

describe("a shared read", () => {
  it("gives callers at the same moment one read, and reads again once it has ended", async () => {
    let reads = 0;
    const read = sharedRead(async () => ++reads);
    expect(await Promise.all([read(), read(), read()])).toEqual([1, 1, 1]);
    expect(await read()).toBe(2);
  });

  it("shares a failure with the callers of that read only", async () => {
    let reads = 0;
    const read = sharedRead(async () => {
      if (++reads === 1) throw new Error("down");
      return reads;
    });
    const failed = await Promise.allSettled([read(), read()]);
    expect(failed.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(await read()).toBe(2);
  });
});
