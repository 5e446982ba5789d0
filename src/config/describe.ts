import type { Config } from "./load.js";
import { CONFIG_KEYS, SECRET_KEYS } from "./schema.js";

/** Hides a secret but tells whether it is set; URLs keep their host so the operator can check it. */
export function maskSecret(key: string, value: unknown): string {
  if (value === undefined || value === null) return "(unset)";
  if ((key === "SMTP_URL" || key === "DATABASE_URL") && typeof value === "string") {
    try {
      const u = new URL(value);
      if (u.password) u.password = "****";
      // A password may ride in the query string too (?password=...).
      if (u.search) u.search = "?****";
      return u.toString();
    } catch {
      return "****";
    }
  }
  if (Array.isArray(value)) return `**** (${value.length} set)`;
  return "****";
}

/** The effective settings with every secret masked, for start-up lines and `config show`. */
export function describeConfig(config: Config): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of CONFIG_KEYS) {
    const value = (config as unknown as Record<string, unknown>)[key];
    out[key] = (SECRET_KEYS as readonly string[]).includes(key)
      ? maskSecret(key, value)
      : value === undefined
        ? "(unset)"
        : String(value);
  }
  out.mode = config.sandbox ? "sandbox" : "live";
  return out;
}

/**
 * The value of every secret setting, for the logs' second net (a path or id that holds one is
 * masked, however a client came to send it): a URL gives its password too, a webhook secret
 * the base64 key after `whsec_`.
 */
export function secretValues(config: Config): string[] {
  const out: string[] = [];
  for (const key of SECRET_KEYS) {
    const value = (config as unknown as Record<string, unknown>)[key];
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v !== "string" || v === "") continue;
      out.push(v);
      if (v.startsWith("whsec_")) out.push(v.slice("whsec_".length));
      if (key === "SMTP_URL" || key === "DATABASE_URL") {
        try {
          const password = decodeURIComponent(new URL(v).password);
          if (password) out.push(password);
        } catch {
          // Not a URL, or a password that is not valid percent-encoding: the whole value is in already.
        }
      }
    }
  }
  if (config.upstream.mode === "live") {
    out.push(config.upstream.apiToken);
    if (config.upstream.legacy) out.push(config.upstream.legacy.token);
  }
  return [...new Set(out)];
}
