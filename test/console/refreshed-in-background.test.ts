import { describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { refreshedInBackground } from "../../src/console/refreshed-in-background.js";

/** The overview's forecast: computed once, then served at once and renewed behind the view that finds it old. */
describe("refreshedInBackground", () => {
  it("waits only for the first answer, serves an old one at once while the next is computed, and keeps it when that fails", async () => {
    const clock = manualClock(1_000);
    const calls: ((n: number) => void)[] = [];
    const fails: ((e: Error) => void)[] = [];
    const compute = () =>
      new Promise<{ n: number }>((ok, fail) => {
        calls.push((n) => ok({ n }));
        fails.push(fail);
      });
    const latest = refreshedInBackground(compute, 60_000, clock);

    const first = latest();
    expect(calls).toHaveLength(1);
    calls[0]!(1);
    expect(await first).toEqual({ value: { n: 1 }, computed_at: 1_000 });

    clock.advance(30_000);
    expect(await latest()).toEqual({ value: { n: 1 }, computed_at: 1_000 });
    expect(calls).toHaveLength(1);

    // Old: the view gets the last answer now; one computation starts, however many views ask.
    clock.advance(31_000);
    expect(await latest()).toEqual({ value: { n: 1 }, computed_at: 1_000 });
    expect(await latest()).toEqual({ value: { n: 1 }, computed_at: 1_000 });
    expect(calls).toHaveLength(2);
    calls[1]!(2);
    await Promise.resolve();
    await Promise.resolve();
    expect(await latest()).toEqual({ value: { n: 2 }, computed_at: 62_000 });

    // A failed computation leaves the last answer, and the next view tries again.
    clock.advance(61_000);
    await latest();
    fails[2]!(new Error("the store is busy"));
    await new Promise((r) => setImmediate(r));
    expect(await latest()).toEqual({ value: { n: 2 }, computed_at: 62_000 });
    expect(calls).toHaveLength(4);
  });
});
