import type { Clock } from "../clock.js";

/**
 * `compute`'s latest answer, computed again in the background once it is older than `maxAgeMs`:
 * the view that finds it old gets it at once, not after the work (the forecast reads and prices
 * every renewal due, tens of milliseconds at 100,000 licences), and the next view the new one.
 * Only the first view waits. One computation at a time; one that fails leaves the last answer.
 */
export function refreshedInBackground<T>(compute: () => Promise<T>, maxAgeMs: number, clock: Clock): () => Promise<T & { computed_at: number }> {
  let latest: (T & { computed_at: number }) | undefined;
  let running: Promise<T & { computed_at: number }> | undefined;
  const refresh = () =>
    (running ??= compute()
      .then((value) => (latest = { ...value, computed_at: clock.now() }))
      .finally(() => {
        running = undefined;
      }));
  return async () => {
    if (!latest) return refresh();
    if (clock.now() - latest.computed_at > maxAgeMs) refresh().catch(() => {});
    return latest;
  };
}
