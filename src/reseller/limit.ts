import { JobInterruptedError } from "../jobs/errors.js";

export interface ConcurrencyLimit {
  <T>(call: () => Promise<T>): Promise<T>;
  /** Calls still waiting, and any made later, reject with JobInterruptedError; running ones finish. */
  close(): void;
}

/**
 * At most `max` of the wrapped calls run at once; the rest wait their turn in arrival order.
 * Bounds what WORKER_CONCURRENCY promises (upstream calls in flight) separately from how many
 * jobs run, so a job's local work (rendering a mail, writing rows) never holds an upstream slot.
 */
export function concurrencyLimit(max: number): ConcurrencyLimit {
  let active = 0;
  let closed = false;
  const waiting: { go: () => void; stop: (e: Error) => void }[] = [];
  const release = () => {
    active--;
    waiting.shift()?.go();
  };
  const limit = (async <T>(call: () => Promise<T>): Promise<T> => {
    if (closed) throw new JobInterruptedError();
    if (active >= max) await new Promise<void>((go, stop) => waiting.push({ go, stop }));
    active++;
    try {
      return await call();
    } finally {
      release();
    }
  }) as ConcurrencyLimit;
  limit.close = () => {
    closed = true;
    for (const w of waiting.splice(0)) w.stop(new JobInterruptedError());
  };
  return limit;
}
