export interface BackoffOptions {
  /** Delay before the first retry, at most. (Default: 2000 ms) */
  baseMs?: number;
  /** Upper bound of any delay. (Default: 300000 ms) */
  capMs?: number;
  random?: () => number;
}

/**
 * Doubling delay with "equal jitter": half fixed, half random, so retries of many jobs that
 * failed together spread out, while the first retry still comes within `baseMs`.
 */
export function backoffDelay(attempt: number, options: BackoffOptions = {}): number {
  const base = options.baseMs ?? 2000;
  const cap = options.capMs ?? 300_000;
  const random = options.random ?? Math.random;
  const exp = Math.min(cap, base * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp / 2 + random() * (exp / 2));
}
