import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { spawn, spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { describeConfig, secretValues } from "../src/config/describe.js";
import { ConfigError, EX_CONFIG, loadConfig } from "../src/config/load.js";
import { RESELLER_CATALOGUE } from "./helpers/bridge.js";

const SECRET = "whsec_" + Buffer.from("0123456789abcdef0123").toString("base64");
const live = {
  RESELLER_API_URL: "https://reseller.example/api/v1",
  RESELLER_API_TOKEN: "tok_live_123",
  WEBHOOK_SECRETS: SECRET,
  ADMIN_TOKEN: "admin-token-0123456789",
  // The shipped catalogue also names Manage2 and CLN, which this configuration does not give.
  PRODUCTS_FILE: RESELLER_CATALOGUE,
};

function tempDir() {
  return mkdtempSync(join(tmpdir(), "lb-config-"));
}

function problems(env: Record<string, string>): string[] {
  const dir = tempDir();
  try {
    loadConfig({ env: { DATABASE_PATH: join(dir, "db.sqlite"), PRODUCTS_FILE: RESELLER_CATALOGUE, ...env }, cwd: process.cwd() });
  } catch (err) {
    if (err instanceof ConfigError) return err.lines;
    throw err;
  }
  return [];
}

describe("configuration", () => {
  it("no configuration at all is sandbox mode with generated, persistent credentials", () => {
    const dir = tempDir();
    const env = { DATABASE_PATH: join(dir, "db.sqlite") };
    const a = loadConfig({ env, cwd: process.cwd() });
    const b = loadConfig({ env, cwd: process.cwd() });
    expect(a.sandbox).toBe(true);
    expect(a.upstream.mode).toBe("sandbox");
    expect(a.WEBHOOK_SECRETS[0]).toMatch(/^whsec_/);
    expect(b.WEBHOOK_SECRETS).toEqual(a.WEBHOOK_SECRETS);
    expect(b.ADMIN_TOKEN).toEqual(a.ADMIN_TOKEN);
  });

  it("a complete live configuration loads with its defaults", () => {
    const c = loadConfig({ env: { ...live, DATABASE_PATH: join(tempDir(), "x.db") }, cwd: process.cwd() });
    expect(c.sandbox).toBe(false);
    expect(c.PORT).toBe(8080);
    expect(c.RENEWAL_LEAD_DAYS).toBe(3);
    expect(c.WORKER_CONCURRENCY).toBe(8);
    expect(c.catalog.product("13")).toMatchObject({ type: "litespeed", variant: "litespeed4", maxIpChanges: 3 });
  });

  it("a missing token names RESELLER_API_TOKEN", () => {
    const { RESELLER_API_TOKEN: _drop, ...env } = live;
    expect(problems(env)).toEqual([expect.stringMatching(/^RESELLER_API_TOKEN: is required when RESELLER_API_URL is set/)]);
  });

  it("a malformed URL names RESELLER_API_URL", () => {
    expect(problems({ ...live, RESELLER_API_URL: "not a url" })).toEqual([expect.stringMatching(/^RESELLER_API_URL: /)]);
  });

  it("a bad cron expression names RENEWAL_CRON and says what is expected", () => {
    const lines = problems({ ...live, RENEWAL_CRON: "every hour" });
    expect(lines).toEqual([expect.stringMatching(/^RENEWAL_CRON: is not a valid cron expression \(expected .*cron/)]);
  });

  it("reports every problem at once, one line each", () => {
    const lines = problems({ ...live, PORT: "http", WORKER_CONCURRENCY: "0", WEBHOOK_SECRETS: "nope", LOG_LEVEL: "loud" });
    expect(lines.map((l) => l.split(":")[0]).sort()).toEqual(["LOG_LEVEL", "PORT", "WEBHOOK_SECRETS", "WORKER_CONCURRENCY"]);
  });

  it("reports a field problem and a cross-field requirement together", () => {
    const { RESELLER_API_TOKEN: _drop, ...env } = live;
    const lines = problems({ ...env, PORT: "abc" });
    expect(lines.map((l) => l.split(":")[0]).sort()).toEqual(["PORT", "RESELLER_API_TOKEN"]);
    expect(lines).toContain("PORT: is not a number (expected a port number 0-65535, e.g. 8080)");
  });

  it("reports field problems, cross-field requirements and the catalogue's problems together, one line each", () => {
    const dir = tempDir();
    const file = join(dir, "products.json");
    writeFileSync(file, JSON.stringify({ products: { "1": { type: "nope" } } }));
    const lines = problems({ RESELLER_API_URL: "https://reseller.example/api/v1", PORT: "abc", RENEWAL_CRON: "bad", PRODUCTS_FILE: file });
    expect(lines.map((l) => l.split(":")[0]).sort()).toEqual(["ADMIN_TOKEN", "PORT", "PRODUCTS_FILE", "RENEWAL_CRON", "RESELLER_API_TOKEN", "WEBHOOK_SECRETS"]);
    expect(lines.find((l) => l.startsWith("PRODUCTS_FILE:"))).toMatch(/^PRODUCTS_FILE: products\.1/);
  });

  it("reports a missing catalogue beside a field problem", () => {
    const lines = problems({ ...live, WORKER_CONCURRENCY: "0", PRODUCTS_FILE: join(tempDir(), "nowhere.json") });
    expect(lines.map((l) => l.split(":")[0]).sort()).toEqual(["PRODUCTS_FILE", "WORKER_CONCURRENCY"]);
  });

  it("refuses a secret in the settings file", () => {
    const dir = tempDir();
    const file = join(dir, "settings.json");
    writeFileSync(file, JSON.stringify({ PORT: 9000, ADMIN_TOKEN: "x".repeat(20) }));
    expect(problems({ ...live, CONFIG_FILE: file })).toEqual([expect.stringMatching(/^ADMIN_TOKEN: is a secret/)]);
  });

  it("lets the environment override the settings file", () => {
    const dir = tempDir();
    const file = join(dir, "settings.json");
    writeFileSync(file, JSON.stringify({ PORT: 9000, RENEWAL_LEAD_DAYS: 5 }));
    const c = loadConfig({ env: { ...live, CONFIG_FILE: file, PORT: "9100", DATABASE_PATH: join(dir, "d.db") }, cwd: process.cwd() });
    expect(c.PORT).toBe(9100);
    expect(c.RENEWAL_LEAD_DAYS).toBe(5);
  });

  it("reports a broken product catalogue under PRODUCTS_FILE with the field path", () => {
    const dir = tempDir();
    const file = join(dir, "products.json");
    writeFileSync(file, JSON.stringify({ products: { "1": { type: "cpanel", variant: "litespeed4" }, "2": { type: "nope" } } }));
    const lines = problems({ ...live, PRODUCTS_FILE: file });
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines.every((l) => l.startsWith("PRODUCTS_FILE: products."))).toBe(true);
  });

  it("masks every secret when the configuration is described", () => {
    const c = loadConfig({
      env: { ...live, SMTP_URL: "smtp://mailer:hunter2pass@mail.example:587", DATABASE_PATH: join(tempDir(), "x.db") },
      cwd: process.cwd(),
    });
    const text = JSON.stringify(describeConfig(c));
    for (const secret of ["tok_live_123", SECRET, "admin-token-0123456789", "hunter2pass"]) expect(text).not.toContain(secret);
    expect(text).toContain("mail.example");
  });

  it("lists every secret value for the logs' second net: tokens, webhook secrets and their keys, URL passwords", () => {
    const c = loadConfig({
      env: { ...live, SMTP_URL: "smtp://mailer:hunter2%2Fpass@mail.example:587", BLESTA_WEBHOOK_TOKEN: "b".repeat(40), DATABASE_PATH: join(tempDir(), "x.db") },
      cwd: process.cwd(),
    });
    expect(secretValues(c)).toEqual(
      expect.arrayContaining(["tok_live_123", SECRET, SECRET.slice("whsec_".length), "admin-token-0123456789", "hunter2/pass", "b".repeat(40)]),
    );
    expect(secretValues(c)).not.toContain("mail.example");
  });

  it("describes DATABASE_URL by its host and database, never its password (in the userinfo or the query)", () => {
    const c = loadConfig({ env: { ...live, DATABASE_URL: "postgres://bridge:pgS3cretpw@db.example:5432/licences?password=pgQu3rypw" }, cwd: process.cwd() });
    const described = describeConfig(c).DATABASE_URL!;
    expect(described).not.toContain("pgS3cretpw");
    expect(described).not.toContain("pgQu3rypw");
    expect(described).toContain("db.example:5432/licences");
  });

  it("describes every URL setting by where it points, never its userinfo, query or fragment", () => {
    const c = loadConfig({
      env: {
        ...live,
        RESELLER_API_URL: "https://resUser:resPassw0rd-api@reseller.example/api/v1",
        RESELLER_LEGACY_URL: "https://legacyTok3n-in-userinfo@legacy.example/v2#legacyFragm3nt",
        RESELLER_LEGACY_TOKEN: "legacy-token",
        BLESTA_API_URL: "https://blUser:bl3staPassword@billing.example/api",
        BLESTA_API_USER: "api",
        BLESTA_API_KEY: "key",
        HOSTBILL_API_URL: "https://hostbill.example/admin/api.php?api_key=hbQu3rySecret",
        HOSTBILL_API_ID: "id",
        HOSTBILL_API_KEY: "key",
        SMTP_URL: "smtp://smtpTok3n-in-userinfo@mail.example:587",
        DATABASE_PATH: join(tempDir(), "x.db"),
      },
      cwd: process.cwd(),
    });
    const described = describeConfig(c);
    const text = JSON.stringify(described);
    const credentials = ["resUser", "resPassw0rd-api", "legacyTok3n-in-userinfo", "legacyFragm3nt", "blUser", "bl3staPassword", "hbQu3rySecret", "smtpTok3n-in-userinfo"];
    for (const secret of credentials) expect(text, secret).not.toContain(secret);
    expect(described.RESELLER_API_URL).toBe("https://****:****@reseller.example/api/v1");
    expect(described.RESELLER_LEGACY_URL).toBe("https://****@legacy.example/v2#****");
    expect(described.HOSTBILL_API_URL).toBe("https://hostbill.example/admin/api.php?****");
    expect(described.SMTP_URL).toBe("smtp://****@mail.example:587");
    // The logs' second net knows them too, so a client that sends one in a path has it masked.
    expect(secretValues(c)).toEqual(expect.arrayContaining(["resPassw0rd-api", "legacyTok3n-in-userinfo", "bl3staPassword", "hbQu3rySecret", "smtpTok3n-in-userinfo"]));
  });

  it("the CLI exits 78 with one line naming the variable", () => {
    const res = spawnSync(process.execPath, ["bin/license-bridge.mjs", "migrate"], {
      env: { ...process.env, ...live, RESELLER_API_TOKEN: "", RENEWAL_CRON: "bad", DATABASE_PATH: join(tempDir(), "x.db") },
      encoding: "utf8",
    });
    expect(res.status).toBe(EX_CONFIG);
    expect(res.stderr).toMatch(/RESELLER_API_TOKEN: is required/);
    expect(res.stderr).toMatch(/RENEWAL_CRON: is not a valid cron expression/);
    expect(res.stderr).not.toContain("at ");
  });
});

describe("sandbox mode fails closed", () => {
  it("a mistyped RESELLER_API_URL beside real secrets stops start-up (78), naming the typo and what is missing, and prints no secret", () => {
    const secrets = { WEBHOOK_SECRETS: SECRET, ADMIN_TOKEN: "admin-token-0123456789", PROVISIONING_TOKEN: "prov-token-0123456789" };
    const res = cli(["serve"], { RESELER_API_URL: "https://reseller.example/api/v1", ...secrets, DATABASE_PATH: join(tempDir(), "x.db") });
    expect(res.status, res.stderr).toBe(EX_CONFIG);
    expect(linesNaming(res.stderr, "RESELER_API_URL")).toEqual([expect.stringMatching(/RESELER_API_URL: is not a known setting; did you mean RESELLER_API_URL\?/)]);
    expect(res.stderr).toMatch(/RESELLER_API_URL: is required: WEBHOOK_SECRETS, ADMIN_TOKEN, PROVISIONING_TOKEN are set, which only a live configuration uses/);
    expect(res.stderr).toMatch(/RESELLER_API_TOKEN: is required/);
    expect(res.stderr).not.toMatch(/SANDBOX MODE|sandbox-credentials/);
    for (const s of Object.values(secrets)) {
      expect(res.stderr).not.toContain(s);
      expect(res.stdout).not.toContain(s);
    }
  });

  it("any one live setting without the rest is a configuration error naming each missing one", () => {
    const lines = problems({ ADMIN_TOKEN: "admin-token-0123456789" });
    expect(lines.map((l) => l.split(":")[0]).sort()).toEqual(["RESELLER_API_TOKEN", "RESELLER_API_URL", "WEBHOOK_SECRETS"]);
    expect(problems({ SMTP_URL: "smtp://mail.example:587" }).map((l) => l.split(":")[0]).sort()).toEqual(["ADMIN_TOKEN", "RESELLER_API_TOKEN", "RESELLER_API_URL", "WEBHOOK_SECRETS"]);
  });

  it("a name near one of ours is named with its likely spelling; the rest of the environment is not judged", () => {
    expect(problems({ WORKER_CONCURENCY: "4" })).toEqual([expect.stringMatching(/^WORKER_CONCURENCY: is not a known setting; did you mean WORKER_CONCURRENCY\?/)]);
    expect(problems({ HOME: "/root", HOSTNAME: "x", NODE_OPTIONS: "", LB_TEST_STORE: "sqlite", SANDBOX_PORT: "8090", PATH: "/bin" })).toEqual([]);
  });
});

/** Runs the real CLI with `env` over this process's environment (no RESELLER_* from outside). */
function cli(args: string[], env: Record<string, string>) {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("RESELLER_"))) as Record<string, string>;
  return spawnSync(process.execPath, ["bin/license-bridge.mjs", ...args], { env: { ...base, LOG_LEVEL: "silent", PORT: "0", ...env }, encoding: "utf8", timeout: 20_000 });
}

/** The lines of stderr that mention `text`. */
const linesNaming = (stderr: string, text: string) => stderr.split("\n").filter((l) => l.includes(text));

describe("a database or data directory the service cannot use", () => {
  /** A regular file where a directory should be: no database can be created under it, not even by root. */
  function pathUnderAFile(): string {
    const file = join(tempDir(), "not-a-directory");
    writeFileSync(file, "");
    return join(file, "bridge.db");
  }

  for (const command of ["serve", "migrate"]) {
    it(`${command} exits 78 with one line naming DATABASE_PATH when it cannot be created (live mode)`, () => {
      const res = cli([command], { ...live, DATABASE_PATH: pathUnderAFile() });
      expect(res.status, res.stderr).toBe(EX_CONFIG);
      expect(linesNaming(res.stderr, "DATABASE_PATH")).toEqual([expect.stringMatching(/^ {2}DATABASE_PATH: .*not-a-directory.* \(expected /)]);
      expect(res.stderr).not.toMatch(/\n\s+at /);
    });

    it(`${command} exits 78 with one line naming DATABASE_PATH when its directory cannot hold the sandbox's files`, () => {
      const res = cli([command], { DATABASE_PATH: pathUnderAFile() });
      expect(res.status, res.stderr).toBe(EX_CONFIG);
      expect(linesNaming(res.stderr, "DATABASE_PATH")).toEqual([expect.stringMatching(/^ {2}DATABASE_PATH: .*not-a-directory/)]);
    });
  }

  const broken: [string, string][] = [
    ["not JSON", "{ this is not json"],
    ["cut short, with a secret in it", 'whsec_c2VjcmV0LXRoYXQtbXVzdC1ub3QtbGVhaw== "admin_token"'],
    ["JSON of another shape", '{"webhook_secret": 42}'],
  ];
  for (const [what, content] of broken) {
    for (const command of ["serve", "migrate"]) {
      it(`${command} exits 78 naming data/sandbox-credentials.json and what to do when it is ${what}`, () => {
        const dir = tempDir();
        const credentials = join(dir, "sandbox-credentials.json");
        writeFileSync(credentials, content);
        const res = cli([command], { DATABASE_PATH: join(dir, "bridge.db") });
        expect(res.status, res.stderr).toBe(EX_CONFIG);
        expect(linesNaming(res.stderr, credentials)).toEqual([expect.stringMatching(/delete it .*or fix/)]);
        expect(readFileSync(credentials, "utf8"), "the file is left for the operator").toBe(content);
        expect(res.stderr, "the file's content is never quoted").not.toContain("whsec_");
      });
    }
  }
});

/** The catalogue in the package (config/products.json at its root), which a default setting falls back to. */
const SHIPPED_CATALOG = resolve(import.meta.dirname, "../config/products.json");

describe("MAIL_FROM", () => {
  const accepted = [
    "licenses@localhost",
    "licenses@example.com",
    "first.last+tag@mail.example.co.uk",
    "Licences <licenses@example.com>",
    "Example Hosting Ltd. <licenses@example.com>",
    '"Example Hosting, Licences" <licenses@example.com>',
    '"Ann \\"the\\" Admin" <ann@example.com>',
    "<licenses@example.com>",
  ];
  for (const from of accepted) {
    it(`accepts ${from}`, () => {
      const c = loadConfig({ env: { ...live, MAIL_FROM: from, DATABASE_PATH: join(tempDir(), "x.db") }, cwd: process.cwd() });
      expect(c.MAIL_FROM).toBe(from);
    });
  }

  const refused = [
    "nonsense",
    "@example.com",
    "licenses@",
    "licenses@@example.com",
    "two words@example.com",
    "Licences licenses@example.com",
    "Licences <licenses@example.com",
    "Licences <nonsense>",
    "a@example.com, b@example.com",
    "licenses@example.com\r\nBcc: victim@example.com",
    "Some, One <licenses@example.com>",
    'Bad "quote <licenses@example.com>',
  ];
  for (const from of refused) {
    it(`refuses ${JSON.stringify(from)} with one line naming MAIL_FROM`, () => {
      expect(problems({ ...live, MAIL_FROM: from })).toEqual([expect.stringMatching(/^MAIL_FROM: .* \(expected .*@/)]);
    });
  }

  it("that is not an address stops the CLI with exit code 78 and one line naming it", () => {
    const res = cli(["migrate"], { ...live, MAIL_FROM: "nonsense", DATABASE_PATH: join(tempDir(), "x.db") });
    expect(res.status, res.stderr).toBe(EX_CONFIG);
    expect(linesNaming(res.stderr, "MAIL_FROM")).toEqual([expect.stringMatching(/^ {2}MAIL_FROM: /)]);
  });
});

describe("the product catalogue when PRODUCTS_FILE is not set", () => {
  const { PRODUCTS_FILE: _set, ...liveUnsetCatalogue } = live;

  it("is config/products.json of the working directory when there is one", () => {
    const dir = tempDir();
    mkdirSync(join(dir, "config"));
    writeFileSync(join(dir, "config/products.json"), JSON.stringify({ products: { "99": { type: "cpanel" } } }));
    const c = loadConfig({ env: { ...liveUnsetCatalogue, DATABASE_PATH: join(dir, "x.db") }, cwd: dir });
    expect(c.PRODUCTS_FILE).toBe(join(dir, "config/products.json"));
    expect(c.catalog.productIds()).toEqual(["99"]);
  });

  it("in sandbox mode, is the shipped example catalogue when the working directory has none", () => {
    const dir = tempDir();
    const c = loadConfig({ env: { DATABASE_PATH: join(dir, "x.db") }, cwd: dir });
    expect(c.sandbox).toBe(true);
    expect(c.PRODUCTS_FILE).toBe(SHIPPED_CATALOG);
    expect(c.catalog.product("13")).toMatchObject({ type: "litespeed", variant: "litespeed4" });
  });

  it("in live mode, missing, is a configuration error naming PRODUCTS_FILE: never the shipped example", () => {
    const dir = tempDir();
    let lines: string[] = [];
    try {
      loadConfig({ env: { ...liveUnsetCatalogue, DATABASE_PATH: join(dir, "x.db") }, cwd: dir });
    } catch (err) {
      lines = (err as ConfigError).lines;
    }
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^PRODUCTS_FILE: is not set, and ${join(dir, "config/products.json")} does not exist`))]);
  });

  it("set but unreadable, is an error naming PRODUCTS_FILE, with no fallback", () => {
    const dir = tempDir();
    const lines = problems({ ...live, PRODUCTS_FILE: join(dir, "nowhere.json") });
    expect(lines).toEqual([expect.stringMatching(/^PRODUCTS_FILE: cannot read .*nowhere\.json/)]);
  });

  it("serve started from a directory without config/ runs on the shipped catalogue", async () => {
    const LISTENING = /license-bridge listening on (http:\/\/[\d.:]+)"/;
    const dir = tempDir();
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("RESELLER_") && k !== "PRODUCTS_FILE" && k !== "CONFIG_FILE"));
    const proc = spawn(process.execPath, [resolve(import.meta.dirname, "../bin/license-bridge.mjs"), "serve"], {
      cwd: dir,
      env: { ...base, LOG_LEVEL: "info", HOST: "127.0.0.1", PORT: "0", DATABASE_PATH: join(dir, "bridge.db") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let listened: () => void;
    const listening = new Promise<void>((r) => (listened = r));
    for (const stream of [proc.stdout, proc.stderr]) {
      stream.on("data", (d: Buffer) => {
        out += d.toString();
        if (LISTENING.test(out)) listened();
      });
    }
    const exited = new Promise<number | string | null>((r) => proc.once("exit", (code, signal) => r(code ?? signal)));
    const first = await Promise.race([listening.then(() => "listening"), exited.then((code) => `exited with ${code}`)]);
    expect(first, out).toBe("listening");
    // An answer means the event loop has turned since the line was written, so the SIGTERM
    // handler is in place (serve logs the line just before it installs the handler).
    const url = LISTENING.exec(out)![1]!;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    proc.kill("SIGTERM");
    expect(await exited, out).toBe(0);
    const configLine = out.split("\n").find((l) => l.includes('"configuration"'));
    expect(JSON.parse(configLine!).config.PRODUCTS_FILE).toBe(SHIPPED_CATALOG);
    // Every path it uses is logged once, absolute, with the base that relative settings resolve against.
    const paths = JSON.parse(out.split("\n").find((l) => l.includes('"paths')) ?? "{}") as { base_dir?: string; paths?: Record<string, string> };
    expect(paths.base_dir).toBe(dir);
    expect(paths.paths).toMatchObject({ database: join(dir, "bridge.db"), catalogue: SHIPPED_CATALOG, mail_outbox: join(dir, "outbox") });
    for (const p of Object.values(paths.paths ?? {})) expect(p.startsWith("/"), p).toBe(true);
  });
});
