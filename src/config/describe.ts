import { maskedUrl, urlCredentials } from "../log/url-credentials.js";
import type { Config } from "./load.js";
import { CONFIG_KEYS, SECRET_KEYS } from "./schema.js";

/**
 * The settings that hold a URL, secret or not: any of them may carry credentials (userinfo, a
 * token in the query), so each is printed as where it points and no more.
 */
const isUrlKey = (key: string) => key.endsWith("_URL");

/** Hides a secret but tells whether it is set; URLs keep their host so the operator can check it. */
export function maskSecret(key: string, value: unknown): string {
  if (value === undefined || value === null) return "(unset)";
  if (isUrlKey(key) && typeof value === "string") return maskedUrl(value);
  if (Array.isArray(value)) return `**** (${value.length} set)`;
  return "****";
}

/** The effective settings with every secret masked, for start-up lines and `config show`. */
export function describeConfig(config: Config): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of CONFIG_KEYS) {
    const value = (config as unknown as Record<string, unknown>)[key];
    out[key] = (SECRET_KEYS as readonly string[]).includes(key) || isUrlKey(key)
      ? maskSecret(key, value)
      : value === undefined
        ? "(unset)"
        : String(value);
  }
  out.mode = config.sandbox ? "sandbox" : "live";
  // Which providers licences are bought from, and how: never their credentials.
  out.providers =
    Object.entries(config.providers)
      .filter(([, p]) => p !== null)
      .map(([name, p]) => `${name} (${p!.mode})`)
      .join(", ") || "(none)";
  return out;
}

/**
 * The value of every secret setting, for the logs' second net (a path or id that holds one is
 * masked, however a client came to send it): a webhook secret gives the base64 key after
 * `whsec_` too, and every URL setting, secret or not, the credentials it carries.
 */
export function secretValues(config: Config): string[] {
  const out: string[] = [];
  for (const key of SECRET_KEYS) {
    const value = (config as unknown as Record<string, unknown>)[key];
    for (const v of Array.isArray(value) ? value : [value]) {
      if (typeof v !== "string" || v === "") continue;
      out.push(v);
      if (v.startsWith("whsec_")) out.push(v.slice("whsec_".length));
    }
  }
  for (const key of CONFIG_KEYS.filter(isUrlKey)) {
    const value = (config as unknown as Record<string, unknown>)[key];
    if (typeof value === "string") out.push(...urlCredentials(value));
  }
  if (config.upstream.mode === "live") {
    out.push(config.upstream.apiToken);
    if (config.upstream.legacy) out.push(config.upstream.legacy.token);
  }
  // Sandbox credentials are public knowledge; a live provider's secret is the operator's.
  if (config.providers.manage2?.mode === "live") out.push(config.providers.manage2.password);
  if (config.providers.cln?.mode === "live") out.push(config.providers.cln.secretKey);
  return [...new Set(out)];
}
