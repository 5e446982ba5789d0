import type { Clock } from "../clock.js";

/** An answer and when it was computed (Unix ms). */
export interface Computed<T> {
  value: T;
  computed_at: number;
}

/**
 * `compute`'s latest answer, computed again in the background once it is older than `maxAgeMs`:
 * the view that finds it old gets it at once, not after the work (the forecast reads and prices
 * every renewal due, tens of milliseconds at 100,000 licences), and the next view the new one.
 * Only the first view waits. One computation at a time; one that fails leaves the last answer.
 */
export function refreshedInBackground<T>(compute: () => Promise<T>, maxAgeMs: number, clock: Clock): () => Promise<Computed<T>> {
  let latest: Computed<T> | undefined;
  let running: Promise<Computed<T>> | undefined;
  const refresh = () =>
    (running ??= compute()
      .then((value) => (latest = { value, computed_at: clock.now() }))
      .finally(() => {
        running = undefined;
      }));
  return async () => {
    if (!latest) return refresh();
    if (clock.now() - latest.computed_at > maxAgeMs) refresh().catch(() => {});
    return latest;
  };
}
