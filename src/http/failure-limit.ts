import type { Clock } from "../clock.js";
import { canonicalIp, ipv6Groups } from "../vocabulary/ip-address.js";

/**
 * Failed token checks per client: `max` failures within `windowMs` and the client is refused
 * (429 with Retry-After) until the oldest of them falls out of the window. A success clears
 * nothing: a guesser who also holds a viewer's token must not buy fresh guesses by using it.
 * One limit counts the console's logins and the admin API's bearer tokens alike (one guesser,
 * one count), and a refused client is refused with the right token too, or the lock would tell
 * a guesser which guess was right. Kept in memory, per process: a guess costs the guesser, not
 * the database. At most `maxClients` clients are tracked; the oldest goes first.
 */
export interface FailureLimit {
  /** Seconds until the client may try again when it is refused now, else undefined. */
  refused(address: string | undefined): number | undefined;
  /** One more failure of the client (a token that is nobody's). */
  failed(address: string | undefined): void;
}

export const FAILURES_ALLOWED = 10;
export const FAILURE_WINDOW_MS = 15 * 60_000;

/**
 * Who a failure is counted against: an IPv4 address (an IPv4-mapped IPv6 one included), or an
 * IPv6 address's /64, since one subscriber is usually handed a whole /64 and could otherwise
 * take a fresh address per guess.
 */
export function clientOf(address: string | undefined): string {
  const ip = address === undefined ? undefined : canonicalIp(address);
  if (ip === undefined) return address ?? "unknown";
  if (!ip.includes(":")) return ip;
  return `${ipv6Groups(ip)
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`;
}

export function failureLimit(o: { clock: Clock; maxClients?: number }): FailureLimit {
  const max = FAILURES_ALLOWED;
  const windowMs = FAILURE_WINDOW_MS;
  const maxClients = o.maxClients ?? 10_000;
  const failures = new Map<string, number[]>();
  const recent = (client: string, now: number) => (failures.get(client) ?? []).filter((t) => t > now - windowMs);
  return {
    refused(address) {
      const now = o.clock.now();
      const times = recent(clientOf(address), now);
      if (times.length < max) return undefined;
      return Math.max(1, Math.ceil((times[times.length - max]! + windowMs - now) / 1000));
    },
    failed(address) {
      const client = clientOf(address);
      const now = o.clock.now();
      // Only the last `max` matter: they say when the client may try again.
      const times = [...recent(client, now), now].slice(-max);
      // Deleted and set again: the map's order is then the order of last failures.
      failures.delete(client);
      failures.set(client, times);
      if (failures.size > maxClients) failures.delete(failures.keys().next().value!);
    },
  };
}

/** What a refused client is told: when it may try again. */
export function tooManyFailures(retryAfterSeconds: number): string {
  const minutes = Math.ceil(retryAfterSeconds / 60);
  const when = retryAfterSeconds < 60 ? `${retryAfterSeconds} second${retryAfterSeconds === 1 ? "" : "s"}` : `${minutes} minute${minutes === 1 ? "" : "s"}`;
  return `Too many failed logins from your address (${FAILURES_ALLOWED} within ${FAILURE_WINDOW_MS / 60_000} minutes): try again in ${when}.`;
}
