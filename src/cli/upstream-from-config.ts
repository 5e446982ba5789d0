import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";
import type { Config } from "../config/load.js";
import { createUpstream, type Upstream } from "../lifecycle/upstream.js";
import { ResellerError } from "../reseller/errors.js";
import { createV1Client, type V1Client } from "../reseller/v1.js";
import { createV2Client, type V2Client } from "../reseller/v2.js";
import { DEFAULT_SANDBOX_TOKENS } from "../sandbox/app.js";
import { cliLogger } from "./logger.js";
import { CliError } from "./output.js";

/**
 * The reseller the CLI talks to, found the way the service finds it: the configured one, or in
 * sandbox mode the embedded sandbox of the running service (it leaves its address in
 * `<dataDir>/sandbox-upstream.json`).
 */
interface Endpoints {
  v1: { url: string; token: string };
  v2: { url: string; token: string } | null;
}

const pointerSchema = z.object({ apiUrl: z.string(), legacyUrl: z.string().optional() });

function endpoints(config: Config, role: "reseller" | "admin"): Endpoints {
  if (config.upstream.mode === "live") {
    const token = role === "admin" ? (config.RESELLER_ADMIN_TOKEN ?? config.upstream.apiToken) : config.upstream.apiToken;
    return { v1: { url: config.upstream.apiUrl, token }, v2: config.upstream.legacy };
  }
  const pointer = resolve(config.dataDir, "sandbox-upstream.json");
  if (!existsSync(pointer)) {
    throw new CliError(
      "sandbox mode and no running service: start it (npm start), or set RESELLER_API_URL to a reseller (or to `npm run sandbox`)",
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(pointer, "utf8"));
  } catch {
    raw = undefined;
  }
  const parsed = pointerSchema.safeParse(raw);
  if (!parsed.success) throw new CliError(`${pointer} is not what the service writes; restart the service`);
  const { apiUrl, legacyUrl } = parsed.data;
  const token = role === "admin" ? DEFAULT_SANDBOX_TOKENS.admin : DEFAULT_SANDBOX_TOKENS.reseller;
  return {
    v1: { url: apiUrl, token },
    v2: legacyUrl ? { url: legacyUrl, token: DEFAULT_SANDBOX_TOKENS.legacy } : null,
  };
}

/** Quiet unless LOG_LEVEL asks for more than info: the CLI's own output is what matters. */
const logger = (config: Config) => cliLogger(config, config.LOG_LEVEL === "info" ? "warn" : config.LOG_LEVEL);

/** A v1 client with the reseller token, or the admin one for `reseller ...` commands. */
export function v1ClientFromConfig(config: Config, role: "reseller" | "admin" = "reseller"): V1Client {
  const { v1 } = endpoints(config, role);
  return createV1Client({ baseUrl: v1.url, token: v1.token, timeoutMs: config.RESELLER_TIMEOUT_MS, logger: logger(config) });
}

/** The lifecycle's Upstream, with the protocol (RESELLER_PROTOCOL) the service uses. */
export function upstreamFromConfig(config: Config): Upstream {
  const ends = endpoints(config, "reseller");
  const log = logger(config);
  const timeoutMs = config.RESELLER_TIMEOUT_MS;
  const v1 = createV1Client({ baseUrl: ends.v1.url, token: ends.v1.token, timeoutMs, logger: log });
  const v2: V2Client | null = ends.v2 ? createV2Client({ baseUrl: ends.v2.url, token: ends.v2.token, timeoutMs, logger: log }) : null;
  if (config.RESELLER_PROTOCOL === "v2" && !v2) throw new CliError("RESELLER_PROTOCOL=v2 needs RESELLER_LEGACY_URL and RESELLER_LEGACY_TOKEN");
  return createUpstream(config.RESELLER_PROTOCOL, v1, v2);
}

/** Runs a reseller call; its error becomes one line for the operator (exit code 1). */
export async function upstreamCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ResellerError) {
      const fields = "errors" in err && err.errors ? ` ${JSON.stringify(err.errors)}` : "";
      throw new CliError(`${err.message}${err.upstreamMessage ? `: ${err.upstreamMessage}` : ""}${fields}`);
    }
    throw err;
  }
}
