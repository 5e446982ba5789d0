import { validate as isValidCron } from "node-cron";
import { z } from "zod";
import { manage2GroupIdSchema } from "../catalog/product.js";
import { CLN_DEFAULT_URL, MANAGE2_DEFAULT_URL, PROVIDER_TITLES, type ProviderName } from "../vocabulary/providers.js";

/** Variables that hold secrets: only ever read from the environment, and masked when printed. */
export const SECRET_KEYS = [
  "RESELLER_API_TOKEN",
  "RESELLER_LEGACY_TOKEN",
  "RESELLER_ADMIN_TOKEN",
  "WEBHOOK_SECRETS",
  "ADMIN_TOKEN",
  "SMTP_URL",
  "HOSTBILL_WEBHOOK_SECRET",
  "UPMIND_WEBHOOK_SECRET",
  "BLESTA_WEBHOOK_TOKEN",
  "PROVISIONING_TOKEN",
  "DATABASE_URL",
  "BLESTA_API_KEY",
  "HOSTBILL_API_KEY",
  "MANAGE2_PASSWORD",
  "CLN_SECRET_KEY",
] as const;

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

const port = z.coerce
  .number({ error: "must be a whole number" })
  .int({ error: "must be a whole number" })
  .min(0, { error: "must be between 0 and 65535" })
  .max(65535, { error: "must be between 0 and 65535" });

const httpUrl = z
  .url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" })
  .transform((u) => u.replace(/\/+$/, ""));

const whsecList = z
  .string()
  .transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean))
  .pipe(
    z
      .array(
        z.string().refine(isWebhookSecret, {
          error: 'each secret must be "whsec_" followed by base64 of at least 16 bytes',
        }),
      )
      .min(1, { error: "must hold at least one secret" }),
  );

/**
 * Bearer tokens, comma-separated: every one is accepted, so a token is rotated with no outage
 * (add the new one, move the clients over, drop the old one; SIGHUP applies each step).
 */
const tokenList = z
  .string()
  .transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean))
  .pipe(
    z
      .array(z.string().min(16, { error: "each token must be at least 16 characters" }).regex(/^[\x21-\x7e]+$/, { error: "each token must be printable ASCII without spaces" }))
      .min(1, { error: "must hold at least one token" }),
  );

export function isWebhookSecret(s: string): boolean {
  if (!s.startsWith("whsec_")) return false;
  const b64 = s.slice("whsec_".length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return false;
  return Buffer.from(b64, "base64").length >= 16;
}

/** "true"/"false" (also 1/0, yes/no) from env or file; anything else names the problem. */
const booleanFlag = z
  .union([z.boolean(), z.string()])
  .transform((v, ctx) => {
    if (typeof v === "boolean") return v;
    const s = v.trim().toLowerCase();
    if (["true", "1", "yes", "on"].includes(s)) return true;
    if (["false", "0", "no", "off"].includes(s)) return false;
    ctx.addIssue({ code: "custom", message: "must be true or false" });
    return z.NEVER;
  });

const email = z.email({ error: "must be an e-mail address" });

/** Express's named address sets for `trust proxy`. */
const PROXY_SETS = ["loopback", "linklocal", "uniquelocal"];

/**
 * Express's `trust proxy`: `true`/`false`, a number of hops, or a comma-separated list of
 * addresses, CIDR ranges and the names loopback, linklocal, uniquelocal. Checked here so a typo
 * is a start-up error, not a proxy silently trusted or a client IP silently wrong.
 */
const trustProxy = z.union([z.boolean(), z.string()]).transform((v, ctx): boolean | number | string[] => {
  if (typeof v === "boolean") return v;
  const s = v.trim();
  if (/^(true|false)$/i.test(s)) return s.toLowerCase() === "true";
  if (/^\d{1,3}$/.test(s)) return Number(s);
  const items = s.split(",").map((x) => x.trim()).filter(Boolean);
  const bad = items.filter((x) => !PROXY_SETS.includes(x) && !z.union([z.ipv4(), z.ipv6(), z.cidrv4(), z.cidrv6()]).safeParse(x).success);
  if (items.length === 0 || bad.length > 0) {
    ctx.addIssue({ code: "custom", message: `cannot read ${bad.length ? bad.map((b) => JSON.stringify(b)).join(", ") : "an empty list"}` });
    return z.NEVER;
  }
  return items;
});

/**
 * addr-spec with a dot-atom local part and a host name, one label allowed: the default
 * `licenses@localhost` is one, and z.email() refuses it.
 */
const ADDRESS = /[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*/
  .source;
/** A display name: a quoted string, or words without the specials that would make it a list or a route. */
const DISPLAY_NAME = /"(?:[^"\\\r\n]|\\[^\r\n])*"|[^"<>@,;:\\()[\]\r\n]*/.source;
const MAILBOX = new RegExp(`^(?:${ADDRESS}|(?:${DISPLAY_NAME})\\s*<${ADDRESS}>)$`);

/**
 * One sender as a From header takes it: `addr@example.com` or `Name <addr@example.com>`. What
 * nodemailer would otherwise pass on (no address, a list, a header after a line break) would
 * only show when the first customer mail is refused or lands in spam.
 */
const mailbox = z.string().trim().regex(MAILBOX, { error: 'must be an e-mail address, alone or as Name <address>' });

/**
 * The whole configuration, after env has been laid over the JSON settings file.
 * Every value arrives as a string (env) or JSON scalar (file); the schema coerces.
 */
export const configSchema = z
  .object({
    HOST: z.string().min(1).default("127.0.0.1"),
    PORT: port.default(8080),
    DATABASE_PATH: z.string().min(1).default("./data/license-bridge.db"),
    DATABASE_URL: z
      .url({ protocol: /^postgres(ql)?$/, error: "must be a postgres:// URL, e.g. postgres://user:pass@db.example:5432/license_bridge" })
      .optional(),
    RESELLER_API_URL: httpUrl
      .refine((u) => u.endsWith("/api/v1"), { error: "must end in /api/v1" })
      .optional(),
    RESELLER_API_TOKEN: z.string().min(1).optional(),
    RESELLER_LEGACY_URL: httpUrl.optional(),
    RESELLER_LEGACY_TOKEN: z.string().min(1).optional(),
    RESELLER_ADMIN_TOKEN: z.string().min(1).optional(),
    RESELLER_ACCOUNT_ID: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { error: "must be an account id of letters, digits, '.', '_' or '-' (at most 64)" })
      .optional(),
    RESELLER_PROTOCOL: z.enum(["v1", "v2"], { error: 'must be "v1" or "v2"' }).default("v1"),
    RESELLER_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
    RESELLER_SETTLE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(120),
    // cPanel Manage2 (HTTP Basic: docs.cpanel.net/manage2/knowledge-base/manage2-authentication-methods/).
    // RFC 7617: a Basic user-id cannot hold a colon.
    MANAGE2_USER: z.string().trim().min(1).regex(/^[^:\p{Cc}]+$/u, { error: "must be the Manage2 user without a colon or control characters" }).optional(),
    MANAGE2_PASSWORD: z.string().min(1).optional(),
    MANAGE2_URL: httpUrl.default(MANAGE2_DEFAULT_URL),
    MANAGE2_GROUP_ID: manage2GroupIdSchema.optional(),
    // CloudLinux CLN: the token is login|timestamp|sha1(secret key + timestamp) (CLN REST API), so a
    // login with a "|" would make a token CLN reads otherwise.
    CLN_LOGIN: z.string().trim().min(1).regex(/^[^|\p{Cc}]+$/u, { error: 'must be the CLN login without "|" or control characters' }).optional(),
    CLN_SECRET_KEY: z.string().min(1).optional(),
    CLN_URL: httpUrl.default(CLN_DEFAULT_URL),
    ALLOW_PRIVATE_IPS: booleanFlag.default(false),
    WEBHOOK_SECRETS: whsecList.optional(),
    ADMIN_TOKEN: tokenList.optional(),
    // Read by load.ts (operators.ts): the people of the admin API, the CLI and the console.
    OPERATORS_FILE: z.string().min(1).optional(),
    PROVISIONING_TOKEN: tokenList.optional(),
    PROVISION_WAIT_SECONDS: z.coerce.number().int().min(0).max(300).default(20),
    SMTP_URL: z
      .url({ protocol: /^smtps?$/, error: "must be an smtp:// or smtps:// URL" })
      .optional(),
    MAIL_FROM: mailbox.default("licenses@localhost"),
    OPERATOR_EMAIL: email.optional(),
    // Unset: config/products.json of the working directory, else the shipped one (load.ts, catalogFile).
    PRODUCTS_FILE: z.string().min(1).optional(),
    RENEWAL_CRON: z
      .string()
      .refine((c) => isValidCron(c), { error: "is not a valid cron expression" })
      .default("0 * * * *"),
    RENEWAL_LEAD_DAYS: z.coerce.number().int().min(0).max(365).default(3),
    WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(8),
    JOB_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(1000).default(20),
    BLOCKED_RETRY_MINUTES: z.coerce.number().int().min(1).max(1440).default(15),
    QUEUE_LAG_ALERT_MINUTES: z.coerce.number().int().min(1).max(10_080).default(15),
    RETRY_MAX_DELAY_SECONDS: z.coerce.number().int().min(1).max(86_400).default(300),
    SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
    RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(90),
    TERMINATED_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).optional(),
    AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(365),
    HOSTBILL_WEBHOOK_SECRET: z.string().min(16, { error: "must be at least 16 characters" }).optional(),
    UPMIND_WEBHOOK_SECRET: z.string().min(16, { error: "must be at least 16 characters" }).optional(),
    BLESTA_WEBHOOK_TOKEN: z.string().min(32, { error: "must be at least 32 characters (it is the only credential)" }).optional(),
    BLESTA_ALLOWED_IPS: z
      .string()
      .transform((s) => s.split(",").map((x) => x.trim()).filter(Boolean))
      .pipe(z.array(z.union([z.ipv4(), z.ipv6(), z.cidrv4(), z.cidrv6()], { error: "each entry must be an IP address or CIDR range" })))
      .optional(),
    BLESTA_API_URL: httpUrl.optional(),
    BLESTA_API_USER: z.string().min(1).optional(),
    BLESTA_API_KEY: z.string().min(1).optional(),
    HOSTBILL_API_URL: httpUrl.optional(),
    HOSTBILL_API_ID: z.string().min(1).optional(),
    HOSTBILL_API_KEY: z.string().min(1).optional(),
    ADAPTER_FIELD_MAPS_FILE: z.string().min(1).optional(),
    LOG_LEVEL: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(", ")}` }).default("info"),
    TRUST_PROXY: trustProxy.optional(),
    CONSOLE: z.enum(["on", "off"], { error: 'must be "on" or "off"' }).default("on"),
    ENV_FILE: z.string().min(1).optional(),
  });

/** A requirement between variables, for the one-line problem reports. */
export interface CrossFieldProblem {
  key: keyof RawConfig;
  message: string;
}

/**
 * Each provider's connection settings: the two that make it configured (an account and its
 * secret) and the rest, any of which set means the operator meant that provider.
 */
export const PROVIDER_SETTINGS: Readonly<Record<ProviderName, { needs: readonly [keyof RawConfig, keyof RawConfig]; others: readonly (keyof RawConfig)[] }>> = {
  reseller: { needs: ["RESELLER_API_URL", "RESELLER_API_TOKEN"], others: ["RESELLER_LEGACY_URL", "RESELLER_LEGACY_TOKEN", "RESELLER_ADMIN_TOKEN", "RESELLER_ACCOUNT_ID"] },
  manage2: { needs: ["MANAGE2_USER", "MANAGE2_PASSWORD"], others: ["MANAGE2_URL", "MANAGE2_GROUP_ID"] },
  cln: { needs: ["CLN_LOGIN", "CLN_SECRET_KEY"], others: ["CLN_URL"] },
};

/** "product 40", "products 40 and 41", "products 12, 13, 14 and 24 more", for a problem line. */
export function productList(ids: readonly string[]): string {
  if (ids.length === 1) return `product ${ids[0]}`;
  if (ids.length <= 3) return `products ${ids.slice(0, -1).join(", ")} and ${ids.at(-1)}`;
  return `products ${ids.slice(0, 3).join(", ")} and ${ids.length - 3} more`;
}

/**
 * The requirements between variables, checked on the merged input as given rather than in the
 * schema: a refinement of the object runs only when every field is valid, so a bad PORT hid a
 * missing token (contract §1: one line per problem). They look only at which variables are
 * set, so a value that is set but invalid is reported once, by its field. `catalogue` is which
 * providers the product catalogue buys from, with their products' ids (undefined: the catalogue
 * could not be read, and its own problems are reported).
 */
export function crossFieldProblems(input: Readonly<Record<string, unknown>>, catalogue?: ReadonlyMap<ProviderName, readonly string[]>): CrossFieldProblem[] {
  const problems: CrossFieldProblem[] = [];
  const set = (k: keyof RawConfig) => input[k] !== undefined && input[k] !== "";
  const add = (key: keyof RawConfig, message: string) => problems.push({ key, message });
  const named = (p: ProviderName) => catalogue?.get(p) ?? [];
  const boughtFrom = (p: ProviderName) => `the catalogue's ${productList(named(p))} ${named(p).length === 1 ? "is" : "are"} bought from ${PROVIDER_TITLES[p]}`;
  if (set("RESELLER_API_URL") && !set("RESELLER_API_TOKEN")) add("RESELLER_API_TOKEN", "is required when RESELLER_API_URL is set");
  if (!set("RESELLER_API_URL") && set("RESELLER_API_TOKEN")) add("RESELLER_API_URL", "is required when RESELLER_API_TOKEN is set");
  if (set("RESELLER_LEGACY_URL") !== set("RESELLER_LEGACY_TOKEN")) {
    const missing = set("RESELLER_LEGACY_URL") ? "RESELLER_LEGACY_TOKEN" : "RESELLER_LEGACY_URL";
    add(missing, "is required: set both RESELLER_LEGACY_URL and RESELLER_LEGACY_TOKEN, or neither");
  }
  if (input.RESELLER_PROTOCOL === "v2" && set("RESELLER_API_URL") && !set("RESELLER_LEGACY_URL")) {
    add("RESELLER_LEGACY_URL", "is required when RESELLER_PROTOCOL is v2");
  }
  for (const [panel, keys] of [
    ["Blesta", ["BLESTA_API_URL", "BLESTA_API_USER", "BLESTA_API_KEY"]],
    ["HostBill", ["HOSTBILL_API_URL", "HOSTBILL_API_ID", "HOSTBILL_API_KEY"]],
  ] as const) {
    const given = keys.filter(set);
    if (given.length > 0 && given.length < keys.length) {
      for (const k of keys.filter((x) => !set(x))) add(k, `is required with ${given.join(" and ")}: the ${panel} API needs all of ${keys.join(", ")}`);
    }
  }
  // Fail closed: sandbox mode only when nothing of a live configuration is set. A live setting
  // without the reseller (a mistyped RESELLER_API_URL beside real secrets) must not start a
  // sandbox that prints, ignores or pretends to keep what the operator gave it.
  const live = LIVE_KEYS.filter(set);
  const givenOf = (p: ProviderName) => [...PROVIDER_SETTINGS[p].needs, ...PROVIDER_SETTINGS[p].others].filter(set);
  // Manage2 and CLN: an account without its secret (or the reverse, or only a URL) is a provider
  // half configured; a catalogue product of a provider not configured is bought from nowhere.
  for (const p of ["manage2", "cln"] as const) {
    const given = givenOf(p);
    const wanted = live.length > 0 && named(p).length > 0;
    for (const k of PROVIDER_SETTINGS[p].needs.filter((x) => !set(x))) {
      const why = [
        ...(given.length ? [`${given.join(" and ")} ${given.length === 1 ? "is" : "are"} set`] : []),
        ...(wanted ? [boughtFrom(p)] : []),
      ];
      if (why.length) add(k, `is required: ${why.join("; ")}`);
    }
  }
  if (live.length > 0 && !set("RESELLER_API_URL") && !set("RESELLER_API_TOKEN")) {
    // The reseller is needed for the catalogue's reseller products, and when no other provider
    // is meant at all: a live service buys from somewhere. An unreadable catalogue is judged by
    // the settings alone (its own problems are reported beside).
    const otherMeant = (["manage2", "cln"] as const).some((p) => givenOf(p).length > 0 || named(p).length > 0);
    const needed = catalogue ? named("reseller").length > 0 || !otherMeant : !otherMeant;
    const why = `${live.join(", ")} ${live.length === 1 ? "is" : "are"} set, which only a live configuration uses (sandbox mode starts only when none is)`;
    const given = givenOf("reseller");
    if (needed) {
      const reason = named("reseller").length ? `${why}; ${boughtFrom("reseller")}` : why;
      add("RESELLER_API_URL", `is required: ${reason}`);
      add("RESELLER_API_TOKEN", `is required: ${reason}`);
    } else if (given.length > 0) {
      for (const k of PROVIDER_SETTINGS.reseller.needs) add(k, `is required when ${given.join(" and ")} ${given.length === 1 ? "is" : "are"} set`);
    }
  }
  if (live.length > 0 && !set("WEBHOOK_SECRETS")) add("WEBHOOK_SECRETS", "is required outside sandbox mode");
  if (live.length > 0 && !set("ADMIN_TOKEN")) add("ADMIN_TOKEN", "is required outside sandbox mode");
  return problems;
}

/**
 * Settings that only a live configuration uses: any one of them set means the operator meant a
 * live service, so the rest of it is required and sandbox mode is out of the question.
 */
export const LIVE_KEYS: readonly (keyof RawConfig)[] = [
  "RESELLER_API_URL",
  "RESELLER_API_TOKEN",
  "RESELLER_LEGACY_URL",
  "RESELLER_LEGACY_TOKEN",
  "RESELLER_ADMIN_TOKEN",
  "RESELLER_ACCOUNT_ID",
  "WEBHOOK_SECRETS",
  "ADMIN_TOKEN",
  "PROVISIONING_TOKEN",
  "SMTP_URL",
  "HOSTBILL_WEBHOOK_SECRET",
  "UPMIND_WEBHOOK_SECRET",
  "BLESTA_WEBHOOK_TOKEN",
  "BLESTA_API_URL",
  "BLESTA_API_USER",
  "BLESTA_API_KEY",
  "HOSTBILL_API_URL",
  "HOSTBILL_API_ID",
  "HOSTBILL_API_KEY",
  "MANAGE2_USER",
  "MANAGE2_PASSWORD",
  "MANAGE2_URL",
  "MANAGE2_GROUP_ID",
  "CLN_LOGIN",
  "CLN_SECRET_KEY",
  "CLN_URL",
];

export type RawConfig = z.output<typeof configSchema>;

/** What each variable expects, for the one-line problem reports. */
export const EXPECTED: Record<keyof RawConfig, string> = {
  HOST: "a host name or address, e.g. 127.0.0.1",
  PORT: "a port number 0-65535, e.g. 8080",
  DATABASE_PATH: "the path of a SQLite file in a directory this user can write, e.g. ./data/license-bridge.db",
  DATABASE_URL: "postgres://user:pass@host:5432/database (unset: SQLite at DATABASE_PATH)",
  RESELLER_API_URL: "the reseller's v1 base URL, e.g. https://reseller.example/api/v1",
  RESELLER_API_TOKEN: "the v1 bearer token from the reseller panel's API Tokens page",
  RESELLER_LEGACY_URL: "the v2.0 base URL, e.g. https://reseller.example",
  RESELLER_LEGACY_TOKEN: "the v2.0 reseller token",
  RESELLER_ADMIN_TOKEN: "a v1 token with the admin role, for the `reseller` CLI commands (default: RESELLER_API_TOKEN)",
  RESELLER_ACCOUNT_ID:
    "the reseller's own account id, e.g. 42: the reseller API has no call for one's own balance, so the bridge reads it from /admin/reseller/{id}/balance with RESELLER_ADMIN_TOKEN, for /metrics and GET /admin/balance (unset: no balance; sandbox mode knows its own)",
  RESELLER_PROTOCOL: "v1 or v2",
  RESELLER_SETTLE_SECONDS: "seconds 0-86400 to wait after a lost answer of a charging call before reading the licence list, e.g. 120",
  ALLOW_PRIVATE_IPS: "true or false",
  RESELLER_TIMEOUT_MS: "milliseconds 100-120000, e.g. 15000",
  MANAGE2_USER: "the Manage2 user (the partner account's e-mail address) the bridge signs in as, with MANAGE2_PASSWORD",
  MANAGE2_PASSWORD: "the password of MANAGE2_USER",
  MANAGE2_URL: "Manage2's base URL, where /XMLlicenseAdd.cgi and the other functions live, e.g. https://manage2.cpanel.net",
  MANAGE2_GROUP_ID: "the Manage2 group a new licence is filed in when its product names no group_id, e.g. 678 or G678 (unset: the account's default group)",
  CLN_LOGIN: "the CLN account's login, with CLN_SECRET_KEY",
  CLN_SECRET_KEY: "the CLN account's secret key (CLN: account settings), which signs each call's token",
  CLN_URL: "CLN's base URL, where /api/ipl/ lives, e.g. https://cln.cloudlinux.com",
  WEBHOOK_SECRETS: "comma-separated whsec_<base64> secrets",
  ADMIN_TOKEN: "one or more comma-separated random strings of 16 or more characters (several: rotation); `license-bridge secrets new` makes one",
  OPERATORS_FILE:
    'the path of a JSON list of operators, [{"name": "alice", "role": "viewer" | "operator" | "admin", "token_sha256": "<64 hex digits>"}] (`license-bridge operators new` makes an entry)',
  PROVISIONING_TOKEN: "one or more comma-separated random strings of 16 or more characters (the panel modules' bearer tokens; several: rotation)",
  PROVISION_WAIT_SECONDS: "seconds 0-300 a provisioning call waits for its work before answering 202 pending, e.g. 20",
  SMTP_URL: "smtp://user:pass@mail.example:587 or smtps://...",
  MAIL_FROM: 'an e-mail address, e.g. licenses@example.com or "Example Hosting" <licenses@example.com>',
  OPERATOR_EMAIL: "an e-mail address",
  PRODUCTS_FILE: "the path of a product catalogue JSON file",
  RENEWAL_CRON: 'a node-cron expression of 5 fields (or 6 with seconds first), e.g. "0 * * * *"',
  RENEWAL_LEAD_DAYS: "whole days 0-365, e.g. 3",
  WORKER_CONCURRENCY: "a whole number 1-256, e.g. 8",
  JOB_MAX_ATTEMPTS: "a whole number 1-1000, e.g. 20",
  RETRY_MAX_DELAY_SECONDS: "seconds 1-86400, e.g. 300",
  BLOCKED_RETRY_MINUTES: "minutes 1-1440, e.g. 15",
  QUEUE_LAG_ALERT_MINUTES: "minutes 1-10080, e.g. 15",
  SHUTDOWN_GRACE_MS: "milliseconds 0-600000, e.g. 10000",
  RETENTION_DAYS: "whole days 1-36500 to keep finished jobs, processed events' payloads, sent mail records and outbox files, e.g. 90",
  TERMINATED_RETENTION_DAYS: "whole days 1-36500 to keep a terminated service's records after its termination, e.g. 365 (unset: for ever)",
  AUDIT_RETENTION_DAYS: "whole days 1-36500 to keep the operators' audit entries, e.g. 365",
  HOSTBILL_WEBHOOK_SECRET: "the secret of the HostBill WebHooks plugin's webhook (16+ characters)",
  UPMIND_WEBHOOK_SECRET: "the signing secret of the Upmind webhook (16+ characters)",
  BLESTA_WEBHOOK_TOKEN: "a long random token (32+ characters) that ends the Blesta webhook URL",
  BLESTA_ALLOWED_IPS: "comma-separated IPs or CIDR ranges Blesta sends from, e.g. 192.0.2.10,2001:db8::/32",
  BLESTA_API_URL: "Blesta's API base URL, e.g. https://billing.example.com/api",
  BLESTA_API_USER: "the user of a Blesta API key (Settings > System > API Access)",
  BLESTA_API_KEY: "that Blesta API key",
  HOSTBILL_API_URL: "HostBill's admin API URL, e.g. https://billing.example.com/admin/api.php",
  HOSTBILL_API_ID: "the HostBill API ID",
  HOSTBILL_API_KEY: "the HostBill API key",
  ADAPTER_FIELD_MAPS_FILE: "a JSON file overriding the panel adapters' field mappings",
  LOG_LEVEL: LOG_LEVELS.join(", "),
  TRUST_PROXY: "true, false, a number of proxy hops, or comma-separated addresses, CIDR ranges and loopback/linklocal/uniquelocal, e.g. loopback",
  CONSOLE: "on or off",
  ENV_FILE: "the path of a KEY=value file (systemd EnvironmentFile syntax) read at start and again on SIGHUP, e.g. /etc/license-bridge/env",
};

export const CONFIG_KEYS = Object.keys(EXPECTED) as (keyof RawConfig)[];
