/**
 * Failed logins per client address: `max` failures within `windowMs` and that address is refused
 * (429) until the oldest falls out of the window. Kept in memory, per process: a guess costs the
 * guesser, not the database. At most `maxClients` addresses are tracked; the oldest goes first.
 */
export interface LoginLimit {
  /** Seconds to wait when the address is refused now, else undefined. */
  refused(client: string, now: number): number | undefined;
  failed(client: string, now: number): void;
  succeeded(client: string): void;
}

export const LOGIN_FAILURES = 10;
export const LOGIN_WINDOW_MS = 15 * 60_000;

export function loginLimit(o: { max?: number; windowMs?: number; maxClients?: number } = {}): LoginLimit {
  const max = o.max ?? LOGIN_FAILURES;
  const windowMs = o.windowMs ?? LOGIN_WINDOW_MS;
  const maxClients = o.maxClients ?? 10_000;
  const failures = new Map<string, number[]>();
  const recent = (client: string, now: number) => (failures.get(client) ?? []).filter((t) => t > now - windowMs);
  return {
    refused(client, now) {
      const times = recent(client, now);
      if (times.length < max) return undefined;
      return Math.max(1, Math.ceil((times[0]! + windowMs - now) / 1000));
    },
    failed(client, now) {
      const times = recent(client, now);
      times.push(now);
      failures.delete(client);
      failures.set(client, times);
      if (failures.size > maxClients) failures.delete(failures.keys().next().value!);
    },
    succeeded(client) {
      failures.delete(client);
    },
  };
}
