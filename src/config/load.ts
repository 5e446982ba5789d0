import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { z } from "zod";
import { SHIPPED_CATALOG_FILE, loadCatalog, productsByProvider, type Catalog } from "../catalog/catalog.js";
import { manage2GroupIdSchema } from "../catalog/product.js";
import { DEFAULT_CLN_SANDBOX_ACCOUNT } from "../vocabulary/cln-sandbox-identity.js";
import { DEFAULT_MANAGE2_SANDBOX_CREDENTIALS } from "../vocabulary/manage2-sandbox-identity.js";
import { createHash } from "node:crypto";
import { whyNotWritable } from "./file-problems.js";
import { loadOperators, type OperatorEntry } from "./operators.js";
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

/**
 * Where the reseller's calls go: the real reseller, the in-process sandbox (sandbox mode), or
 * nowhere ("none": a live configuration whose catalogue has no reseller product and that sets
 * no reseller; nothing may be bought from a reseller, sandbox or not).
 */
export type UpstreamConfig =
  | { mode: "sandbox" }
  | {
      mode: "live";
      apiUrl: string;
      apiToken: string;
      legacy: { url: string; token: string } | null;
    }
  | { mode: "none" };

/**
 * cPanel Manage2. In sandbox mode an in-process sandbox of its own, signed in to with its
 * built-in credentials (src/vocabulary/manage2-sandbox-identity.ts); its URL is known once it
 * listens. `groupId` is MANAGE2_GROUP_ID (each catalogue product's `purchase.groupId` has it
 * already where the product names no group of its own).
 */
export type Manage2Config =
  | { mode: "sandbox"; user: string; password: string; groupId: number | null }
  | { mode: "live"; url: string; user: string; password: string; groupId: number | null };

/** CloudLinux CLN. In sandbox mode an in-process sandbox of its own, with its built-in account (src/vocabulary/cln-sandbox-identity.ts). */
export type ClnConfig = { mode: "sandbox"; login: string; secretKey: string } | { mode: "live"; url: string; login: string; secretKey: string };

/**
 * The providers licences are bought from, by name; null: not configured, so the catalogue has
 * no product of it (start-up refuses one). In sandbox mode every one is its own sandbox.
 */
export interface ProvidersConfig {
  reseller: Exclude<UpstreamConfig, { mode: "none" }> | null;
  manage2: Manage2Config | null;
  cln: ClnConfig | null;
}

export interface Config extends Omit<RawConfig, "WEBHOOK_SECRETS" | "ADMIN_TOKEN" | "PROVISIONING_TOKEN" | "PRODUCTS_FILE"> {
  /** The catalogue file read, as an absolute path (see catalogFile). */
  PRODUCTS_FILE: string;
  /** Every accepted provisioning token; unset outside sandbox mode when not configured: the provisioning API then answers 404. */
  PROVISIONING_TOKEN?: string[];
  sandbox: boolean;
  /** The reseller's connection (providers.reseller, or "none" without one). */
  upstream: UpstreamConfig;
  providers: ProvidersConfig;
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
  /** OPERATORS_FILE's operators (none when it is unset); ADMIN_TOKEN is the admin named "admin" beside them. */
  operators: OperatorEntry[];
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
  // A bad MANAGE2_GROUP_ID is its own line (above); the catalogue is then only checked.
  const manage2GroupId = manage2GroupIdSchema.optional().safeParse(merged.MANAGE2_GROUP_ID);
  const catalogResult =
    catalogPath === undefined || catalogPath === null ? undefined : loadCatalog(catalogPath, { manage2GroupId: manage2GroupId.success ? manage2GroupId.data : undefined });
  if (catalogResult && !catalogResult.ok) {
    for (const p of catalogResult.problems) problems.push(line("PRODUCTS_FILE", p, "a valid product catalogue (README: Product catalogue)"));
  }
  // After the catalogue: which providers it buys from decides which ones must be configured.
  const catalogue = catalogResult?.ok ? productsByProvider(catalogResult.catalog) : undefined;
  for (const p of crossFieldProblems(merged, catalogue)) problems.push(line(p.key, p.message, EXPECTED[p.key]));
  // The operators file: every problem one line naming the entry and the field. Its tokens are
  // checked against ADMIN_TOKEN's below, once the sandbox's generated one is known too.
  const operatorsFile = merged.OPERATORS_FILE as string | undefined;
  const operatorsResult = operatorsFile ? loadOperators(resolve(cwd, operatorsFile)) : { ok: true as const, operators: [] };
  if (!operatorsResult.ok) for (const p of operatorsResult.problems) problems.push(line("OPERATORS_FILE", p, "a valid operators file (README: Operators, roles and the audit trail)"));
  if (!parsed.success || !catalogResult?.ok || !operatorsResult.ok || problems.length > 0) throw new ConfigError(problems);
  const raw = parsed.data;
  const dataDir = resolve(cwd, dirname(raw.DATABASE_PATH));

  const sandbox = !wantsLive;
  let secrets = raw.WEBHOOK_SECRETS;
  let adminToken = raw.ADMIN_TOKEN;
  let provisioningToken = raw.PROVISIONING_TOKEN;
  if (sandbox && (!secrets || !adminToken || !provisioningToken)) {
    const creds = sandboxCredentials(dataDir);
    secrets ??= [creds.webhook_secret];
    adminToken ??= [creds.admin_token];
    provisioningToken ??= [creds.provisioning_token];
  }

  const adminHashes = new Set(adminToken!.map((t) => createHash("sha256").update(t).digest("hex")));
  const sharing = operatorsResult.operators.filter((o) => adminHashes.has(o.token_sha256));
  if (sharing.length) {
    throw new ConfigError(
      sharing.map((o) =>
        line("OPERATORS_FILE", `operator ${JSON.stringify(o.name)}, token_sha256: is the hash of an ADMIN_TOKEN, which always acts as "admin"`, "a token of the operator's own"),
      ),
    );
  }

  const providers = providersOf(raw, sandbox);
  const upstream: UpstreamConfig = providers.reseller ?? { mode: "none" };
  return {
    ...raw,
    DATABASE_PATH: resolve(cwd, raw.DATABASE_PATH),
    PRODUCTS_FILE: catalogPath!,
    WEBHOOK_SECRETS: secrets!,
    ADMIN_TOKEN: adminToken!,
    PROVISIONING_TOKEN: provisioningToken,
    sandbox,
    upstream,
    providers,
    dataDir,
    baseDir: cwd,
    catalog: catalogResult.catalog,
    operators: operatorsResult.operators,
  };
}

/**
 * Each provider's connection. In sandbox mode all three are sandboxes with their built-in
 * credentials (public knowledge, like the reseller sandbox's tokens); in live mode a provider
 * whose account and secret are both set, and no other (the checks before made sure that every
 * provider the catalogue buys from is one of them).
 */
function providersOf(raw: RawConfig, sandbox: boolean): ProvidersConfig {
  const groupId = raw.MANAGE2_GROUP_ID ?? null;
  if (sandbox) {
    const { user, password } = DEFAULT_MANAGE2_SANDBOX_CREDENTIALS;
    const { login, secretKey } = DEFAULT_CLN_SANDBOX_ACCOUNT;
    return { reseller: { mode: "sandbox" }, manage2: { mode: "sandbox", user, password, groupId }, cln: { mode: "sandbox", login, secretKey } };
  }
  return {
    reseller:
      raw.RESELLER_API_URL && raw.RESELLER_API_TOKEN
        ? {
            mode: "live",
            apiUrl: raw.RESELLER_API_URL,
            apiToken: raw.RESELLER_API_TOKEN,
            legacy: raw.RESELLER_LEGACY_URL ? { url: raw.RESELLER_LEGACY_URL, token: raw.RESELLER_LEGACY_TOKEN! } : null,
          }
        : null,
    manage2:
      raw.MANAGE2_USER && raw.MANAGE2_PASSWORD ? { mode: "live", url: raw.MANAGE2_URL, user: raw.MANAGE2_USER, password: raw.MANAGE2_PASSWORD, groupId } : null,
    cln: raw.CLN_LOGIN && raw.CLN_SECRET_KEY ? { mode: "live", url: raw.CLN_URL, login: raw.CLN_LOGIN, secretKey: raw.CLN_SECRET_KEY } : null,
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
