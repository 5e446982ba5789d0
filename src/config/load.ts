import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { z } from "zod";
import { SHIPPED_CATALOG_FILE, loadCatalog, type Catalog } from "../catalog/catalog.js";
import { whyNotWritable } from "./file-problems.js";
import { readEnvFile } from "./env-file.js";
import { nearMisses } from "./near-miss.js";
import { CONFIG_KEYS, EXPECTED, LIVE_KEYS, SECRET_KEYS, configSchema, crossFieldProblems, type RawConfig } from "./schema.js";

export const EX_CONFIG = 78;

/**
 * Variables read outside the config schema (by the sandbox, the CLI, the settings file itself):
 * known names, so they are never taken for a misspelling of another.
 */
export const OTHER_KNOWN_VARIABLES = [
  "CONFIG_FILE",
  "SANDBOX_PORT",
  "SANDBOX_TOKEN",
  "SANDBOX_ADMIN_TOKEN",
  "SANDBOX_LEGACY_TOKEN",
  "SANDBOX_BALANCE",
  "SANDBOX_LATENCY_MS",
  "SANDBOX_ERROR_RATE",
  "SANDBOX_DROP_RATE",
  "SANDBOX_HOLD_MS",
  "SANDBOX_HOLD_RATE",
  "SANDBOX_STATE_PATH",
] as const;
export const DEFAULT_SETTINGS_FILE = "config/license-bridge.json";
const DEFAULT_PRODUCTS_FILE = "config/products.json";

/** Where provisioning goes: the real reseller, or the in-process sandbox (no URL configured). */
export type UpstreamConfig =
  | { mode: "sandbox" }
  | {
      mode: "live";
      apiUrl: string;
      apiToken: string;
      legacy: { url: string; token: string } | null;
    };

export interface Config extends Omit<RawConfig, "WEBHOOK_SECRETS" | "ADMIN_TOKEN" | "PROVISIONING_TOKEN" | "PRODUCTS_FILE"> {
  /** The catalogue file read, as an absolute path (see catalogFile). */
  PRODUCTS_FILE: string;
  /** Every accepted provisioning token; unset outside sandbox mode when not configured: the provisioning API then answers 404. */
  PROVISIONING_TOKEN?: string[];
  sandbox: boolean;
  upstream: UpstreamConfig;
  /** Directory of the database; sandbox credentials and the mail outbox live here. */
  dataDir: string;
  /**
   * What every relative path of the configuration (DATABASE_PATH, PRODUCTS_FILE, CONFIG_FILE,
   * ADAPTER_FIELD_MAPS_FILE, config/mail/) is resolved against: the working directory the
   * service was started in. Logged at start, with each path made absolute.
   */
  baseDir: string;
  WEBHOOK_SECRETS: string[];
  /** Every accepted admin token (the first is the one the sandbox generated, in sandbox mode). */
  ADMIN_TOKEN: string[];
  catalog: Catalog;
}

/** Every configuration problem at once; `lines` are one per problem, ready to print. */
export class ConfigError extends Error {
  readonly exitCode = EX_CONFIG;
  constructor(readonly lines: string[]) {
    super(`invalid configuration:\n${lines.join("\n")}`);
    this.name = "ConfigError";
  }
}

export interface LoadConfigOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/**
 * Reads `config/license-bridge.json` (non-secret settings, optional), lays the environment
 * over it, validates everything with one schema and reports every problem in one ConfigError.
 */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const cwd = options.cwd ?? process.cwd();
  const problems: string[] = [];
  // ENV_FILE's variables win over the process's: on SIGHUP the file is all that can have changed.
  const given = options.env ?? process.env;
  const envFile = nonEmpty(given.ENV_FILE);
  const fromEnvFile = envFile ? readEnvFile(resolve(cwd, envFile)) : undefined;
  for (const p of fromEnvFile?.problems ?? []) problems.push(line("ENV_FILE", p, EXPECTED.ENV_FILE));
  const env: NodeJS.ProcessEnv = { ...given, ...fromEnvFile?.vars };

  const settingsPath = resolve(cwd, nonEmpty(env.CONFIG_FILE) ?? DEFAULT_SETTINGS_FILE);
  const fromFile = readSettingsFile(settingsPath, nonEmpty(env.CONFIG_FILE) !== undefined, problems);

  const merged: Record<string, unknown> = { ...fromFile };
  for (const key of CONFIG_KEYS) {
    const v = nonEmpty(env[key]);
    if (v !== undefined) merged[key] = v;
  }

  // Every check runs whatever the others found, so the operator sees every problem in one go.
  for (const [name, likely] of nearMisses(env, [...CONFIG_KEYS, ...OTHER_KNOWN_VARIABLES])) {
    problems.push(line(name, `is not a known setting; did you mean ${likely}?`, `${likely}, spelt so (or unset ${name})`));
  }
  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) problems.push(...issuesToLines(parsed.error));
  for (const p of crossFieldProblems(merged)) problems.push(line(p.key, p.message, EXPECTED[p.key]));
  // Env and settings-file values are strings here; an empty one is already its field's problem.
  const productsFile = merged.PRODUCTS_FILE as string | undefined;
  const wantsLive = LIVE_KEYS.some((k) => merged[k] !== undefined);
  const catalogPath = productsFile === "" ? undefined : catalogFile(cwd, productsFile, wantsLive);
  if (catalogPath === null) {
    problems.push(
      line(
        "PRODUCTS_FILE",
        `is not set, and ${resolve(cwd, DEFAULT_PRODUCTS_FILE)} does not exist; a live service never runs on the example catalogue shipped with the code (its product ids would buy licences nobody chose)`,
        "the path of your product catalogue (README: Product catalogue), or config/products.json in the working directory",
      ),
    );
  }
  const catalogResult = catalogPath === undefined || catalogPath === null ? undefined : loadCatalog(catalogPath);
  if (catalogResult && !catalogResult.ok) {
    for (const p of catalogResult.problems) problems.push(line("PRODUCTS_FILE", p, "a valid product catalogue (README: Product catalogue)"));
  }
  if (!parsed.success || !catalogResult?.ok || problems.length > 0) throw new ConfigError(problems);
  const raw = parsed.data;
  const dataDir = resolve(cwd, dirname(raw.DATABASE_PATH));

  const sandbox = raw.RESELLER_API_URL === undefined;
  let secrets = raw.WEBHOOK_SECRETS;
  let adminToken = raw.ADMIN_TOKEN;
  let provisioningToken = raw.PROVISIONING_TOKEN;
  if (sandbox && (!secrets || !adminToken || !provisioningToken)) {
    const creds = sandboxCredentials(dataDir);
    secrets ??= [creds.webhook_secret];
    adminToken ??= [creds.admin_token];
    provisioningToken ??= [creds.provisioning_token];
  }

  const upstream: UpstreamConfig = sandbox
    ? { mode: "sandbox" }
    : {
        mode: "live",
        apiUrl: raw.RESELLER_API_URL!,
        apiToken: raw.RESELLER_API_TOKEN!,
        legacy: raw.RESELLER_LEGACY_URL ? { url: raw.RESELLER_LEGACY_URL, token: raw.RESELLER_LEGACY_TOKEN! } : null,
      };

  return {
    ...raw,
    DATABASE_PATH: resolve(cwd, raw.DATABASE_PATH),
    PRODUCTS_FILE: catalogPath!,
    WEBHOOK_SECRETS: secrets!,
    ADMIN_TOKEN: adminToken!,
    PROVISIONING_TOKEN: provisioningToken,
    sandbox,
    upstream,
    dataDir,
    baseDir: cwd,
    catalog: catalogResult.catalog,
  };
}

/**
 * PRODUCTS_FILE when it is set (env or settings file), against the working directory; unset,
 * `config/products.json` of the working directory when there is one. Else, in sandbox mode, the
 * shipped example (`serve` started from another folder still runs), and in live mode nothing
 * (null: a configuration error), since the example's product ids would map real orders to
 * licences nobody chose. A set PRODUCTS_FILE never falls back: the operator asked for that file.
 */
function catalogFile(cwd: string, configured: string | undefined, live: boolean): string | null {
  if (configured !== undefined) return resolve(cwd, configured);
  const local = resolve(cwd, DEFAULT_PRODUCTS_FILE);
  if (existsSync(local)) return local;
  return live ? null : SHIPPED_CATALOG_FILE;
}

function readSettingsFile(path: string, explicit: boolean, problems: string[]): Record<string, unknown> {
  if (!existsSync(path)) {
    if (explicit) problems.push(line("CONFIG_FILE", `${path} does not exist`, "the path of a JSON settings file"));
    return {};
  }
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    problems.push(line("CONFIG_FILE", `${path} is not valid JSON (${(err as Error).message})`, "a JSON object of settings"));
    return {};
  }
  const shape = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).safeParse(json);
  if (!shape.success) {
    problems.push(line("CONFIG_FILE", `${path} must be a flat JSON object`, '{"PORT": 8080, ...}'));
    return {};
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(shape.data)) {
    if (key === "ENV_FILE") {
      problems.push(line(key, `is read from the environment only (it says where the environment file is), not from ${path}`, "set it in the environment"));
    } else if ((SECRET_KEYS as readonly string[]).includes(key)) {
      problems.push(line(key, `is a secret and must not be in ${path}`, "set it in the environment instead"));
    } else if (!(CONFIG_KEYS as string[]).includes(key)) {
      problems.push(line(key, `is not a known setting (in ${path})`, `one of ${CONFIG_KEYS.filter((k) => !(SECRET_KEYS as readonly string[]).includes(k)).join(", ")}`));
    } else {
      out[key] = String(value);
    }
  }
  return out;
}

function issuesToLines(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const key = String(issue.path[0] ?? "config");
    const expected = EXPECTED[key as keyof RawConfig] ?? "a valid value";
    // Values arrive as text, so a wrong type is a number that did not parse (PORT=abc).
    const message = issue.code === "invalid_type" ? (issue.expected === "number" ? "is not a number" : "has the wrong type") : issue.message;
    return line(key, message, expected);
  });
}

function line(variable: string, problem: string, expected: string): string {
  return `${variable}: ${problem} (expected ${expected})`;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v.trim() === "" ? undefined : v;
}

interface SandboxCredentials {
  webhook_secret: string;
  admin_token: string;
  provisioning_token: string;
}

const sandboxCredentialsSchema = z.object({
  webhook_secret: z.string().min(1),
  admin_token: z.string().min(1),
  provisioning_token: z.string().min(16).optional(),
});

/**
 * Generated once per data directory so `trigger` and the admin API work with no set-up. A file
 * that cannot be read as the credentials is never overwritten: a panel may be configured with
 * the secret in it, so the operator decides.
 */
export function sandboxCredentials(dataDir: string): SandboxCredentials {
  const path = resolve(dataDir, "sandbox-credentials.json");
  let kept: Partial<SandboxCredentials> = {};
  if (existsSync(path)) {
    const what = "the sandbox credentials this service generated: delete it to generate new ones (give the panel the new webhook secret), or fix the JSON";
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(path, "utf8"));
    } catch (err) {
      // Not the parser's message: it may quote the file, and the file holds secrets.
      const position = /at position (\d+)/.exec((err as Error).message)?.[1];
      throw new ConfigError([line(path, `is not valid JSON${position ? ` (at position ${position})` : ""}`, what)]);
    }
    const parsed = sandboxCredentialsSchema.safeParse(json);
    if (!parsed.success) throw new ConfigError([line(path, 'lacks "webhook_secret" or "admin_token" (text)', what)]);
    if (parsed.data.provisioning_token) return parsed.data as SandboxCredentials;
    // A file from before the provisioning API: keep its secrets, add the new token.
    kept = parsed.data;
  }
  const creds: SandboxCredentials = {
    webhook_secret: kept.webhook_secret ?? `whsec_${randomBytes(24).toString("base64")}`,
    admin_token: kept.admin_token ?? `sbx_${randomBytes(24).toString("base64url")}`,
    provisioning_token: `sbp_${randomBytes(24).toString("base64url")}`,
  };
  try {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(path, JSON.stringify(creds, null, 2) + "\n", { mode: 0o600 });
  } catch (err) {
    throw new ConfigError([line("DATABASE_PATH", `its directory ${dataDir} cannot hold the sandbox credentials: ${whyNotWritable(err)}`, EXPECTED.DATABASE_PATH)]);
  }
  return creds;
}

/** The one configuration line for a database that cannot be opened at DATABASE_PATH. */
export function databasePathProblem(err: { message: string }): ConfigError {
  return new ConfigError([line("DATABASE_PATH", err.message, EXPECTED.DATABASE_PATH)]);
}
