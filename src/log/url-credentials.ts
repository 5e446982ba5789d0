/**
 * Credentials that ride in a URL setting: `https://user:pass@host/...` (or a token alone as the
 * user), and tokens in its query string (`?api_key=...`) or fragment. The service uses such a
 * URL as given (the reseller's client sends the userinfo as Basic auth); whatever shows it,
 * the start-up line, /readyz, an error or a log line, shows where it points and no more.
 */

const MASK = "****";

/** `url` as it may be printed: userinfo, query and fragment each `****` (so it still says they are there). */
export function maskedUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return MASK;
  }
  if (u.username) u.username = MASK;
  if (u.password) u.password = MASK;
  if (u.search) u.search = MASK;
  if (u.hash) u.hash = MASK;
  return u.toString();
}

/** `url` without userinfo, query or fragment: what may be fetched to see whether it is reachable, and named. */
export function bareUrl(url: string): string | undefined {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return undefined;
  }
}

/** `scheme://userinfo@` anywhere in a text (fetch's errors quote the URL they refused): up to the last `@` of the authority, as a URL parser reads it, so a password with an `@` in it goes whole. */
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#]*@/gi;

/** `text` with the userinfo of every URL in it replaced by `mask`. */
export function withoutUrlCredentials(text: string, mask = "[redacted]"): string {
  return text.replace(USERINFO, `$1${mask}@`);
}

/**
 * The secrets a URL carries, for the logs' second net: its password, its user when it stands
 * alone (a token as the user), and the values of its query. Decoded, as a client would send them;
 * none shorter than 8 characters, which would mask ordinary words wherever it was looked for.
 */
export function urlCredentials(url: string): string[] {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [];
  }
  const decoded = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  const out = [u.password ? decoded(u.password) : decoded(u.username), ...u.searchParams.values()];
  return out.filter((s) => s.length >= 8);
}
