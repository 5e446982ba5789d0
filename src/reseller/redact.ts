/**
 * Keeps secrets out of logs, error messages and `raw` bodies. The reseller token travels in a
 * header (v1) or in the query string (v2), and an upstream may echo it back in a body, so
 * every text that leaves the client passes through here first.
 */

import { withoutUrlCredentials } from "../log/url-credentials.js";

export const REDACTED = "[redacted]";

// Keys whose values are secrets whatever they hold (a created reseller's token, a password).
const SECRET_KEY = /^(token|api_token|access_token|password|secret|authorization)$/i;

/** Replaces every occurrence of each secret (and of its URL-encoded form) in a string. */
export function scrubText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    // An empty or one-character "secret" would shred every text it touched.
    if (secret.length < 2) continue;
    // Looked for before anything is copied: nearly every text holds no secret, and a licence list holds hundreds of thousands of texts.
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret && out.includes(encoded)) out = out.split(encoded).join(REDACTED);
  }
  return out;
}

/**
 * Masks the `token` query parameter (v2 sends the token there), the userinfo (a reseller URL may
 * carry a Basic auth user and password) and any secret left elsewhere.
 */
export function scrubUrl(url: string, secrets: readonly string[]): string {
  return scrubText(withoutUrlCredentials(url.replace(/([?&]token=)[^&#]*/gi, `$1${REDACTED}`), REDACTED), secrets);
}

/** A deep copy of a parsed body with every occurrence of each secret masked. */
export function scrubSecrets(value: unknown, secrets: readonly string[]): unknown {
  return walk(value, secrets, false);
}

/**
 * `scrubSecrets` without the copy, for a value nothing else holds (what JSON.parse has just
 * returned): a licence list of 100,000 licences is not held twice to scrub it. Returns the value
 * (a string comes back scrubbed, as strings cannot change in place).
 */
export function scrubInPlace(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === "string") return scrubText(value, secrets);
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = scrubInPlace(value[i], secrets);
    return value;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const item = record[key];
    const scrubbed = scrubInPlace(item, secrets);
    // Defined, not assigned: an own "__proto__" key (JSON.parse makes one) would ignore a string assigned to it.
    if (scrubbed !== item) Object.defineProperty(record, key, { value: scrubbed, writable: true, enumerable: true, configurable: true });
  }
  return value;
}

/**
 * Like `scrubSecrets`, and also masks the values of secret-named keys (a created reseller's
 * token, a password): for what is logged or kept as `raw`.
 */
export function redactSecrets(value: unknown, secrets: readonly string[] = []): unknown {
  return walk(value, secrets, true);
}

function walk(value: unknown, secrets: readonly string[], byKey: boolean): unknown {
  if (typeof value === "string") return scrubText(value, secrets);
  if (Array.isArray(value)) return value.map((item) => walk(item, secrets, byKey));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const masked = byKey && SECRET_KEY.test(key) && item !== null && item !== undefined;
      out[key] = masked ? REDACTED : walk(item, secrets, byKey);
    }
    return out;
  }
  return value;
}
