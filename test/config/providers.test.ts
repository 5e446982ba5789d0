import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { describeConfig, secretValues } from "../../src/config/describe.js";
import { ConfigError, EX_CONFIG, loadConfig } from "../../src/config/load.js";
import { DEFAULT_CLN_SANDBOX_ACCOUNT } from "../../src/vocabulary/cln-sandbox-identity.js";
import { DEFAULT_MANAGE2_SANDBOX_CREDENTIALS } from "../../src/vocabulary/manage2-sandbox-identity.js";
import { runCli, spawnCli } from "../cli/helpers.js";
import { RESELLER_CATALOGUE } from "../helpers/bridge.js";

/**
 * The configuration's side of the licence providers (service-contract.md section 12): Manage2's
 * and CLN's settings, which providers a live service must be given (those its catalogue buys
 * from, and each one whole), and their secrets never shown.
 */

const SECRET = "whsec_" + Buffer.from("0123456789abcdef0123").toString("base64");
const BRIDGE = { WEBHOOK_SECRETS: SECRET, ADMIN_TOKEN: "admin-token-0123456789" };
const RESELLER = { RESELLER_API_URL: "https://reseller.example/api/v1", RESELLER_API_TOKEN: "tok_reseller_live_123" };
const MANAGE2 = { MANAGE2_USER: "partner@hosting.example", MANAGE2_PASSWORD: "m2-Passw0rd-live" };
const CLN = { CLN_LOGIN: "hosting-example", CLN_SECRET_KEY: "cln-S3cret-key-live" };

function tempDir() {
  return mkdtempSync(join(tmpdir(), "lb-providers-"));
}

/** A catalogue file of `products`. */
function catalogue(products: Record<string, unknown>): string {
  const file = join(tempDir(), "products.json");
  writeFileSync(file, JSON.stringify({ products }));
  return file;
}

const MIXED = catalogue({
  "12": { type: "cpanel" },
  "40": { provider: "manage2", type: "cpanel", package_id: 12345 },
  "41": { provider: "cln", type: "cloudlinux", cln_type: 1 },
  "42": { provider: "cln", type: "imunify360", cln_type: 41 },
});
const PROVIDERS_ONLY = catalogue({
  "40": { provider: "manage2", type: "cpanel", package_id: 12345 },
  "41": { provider: "cln", type: "cloudlinux", cln_type: 1 },
});
const CLN_ONLY = catalogue({ "41": { provider: "cln", type: "cloudlinux", cln_type: 1 } });

const load = (env: Record<string, string>) => loadConfig({ env: { DATABASE_PATH: join(tempDir(), "bridge.db"), ...env }, cwd: tempDir() });

function problems(env: Record<string, string>): string[] {
  try {
    load(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.lines;
    throw err;
  }
  return [];
}

const keys = (lines: string[]) => lines.map((l) => l.split(":")[0]).sort();

describe("which providers a live configuration must be given", () => {
  it("a catalogue product of a provider that is not configured stops start-up, one line per missing setting naming the products", () => {
    const lines = problems({ ...BRIDGE, ...RESELLER, PRODUCTS_FILE: MIXED });
    expect(lines).toEqual([
      expect.stringMatching(/^MANAGE2_USER: is required: the catalogue's product 40 is bought from cPanel Manage2 \(expected /),
      expect.stringMatching(/^MANAGE2_PASSWORD: is required: the catalogue's product 40 is bought from cPanel Manage2 \(expected /),
      expect.stringMatching(/^CLN_LOGIN: is required: the catalogue's products 41 and 42 are bought from CloudLinux CLN \(expected /),
      expect.stringMatching(/^CLN_SECRET_KEY: is required: the catalogue's products 41 and 42 are bought from CloudLinux CLN \(expected /),
    ]);
  });

  it("the bin exits 78 naming the product and Manage2's missing settings, and prints no secret", async () => {
    const run = await spawnCli(["migrate"], { ...BRIDGE, ...RESELLER, ...CLN, PRODUCTS_FILE: MIXED, DATABASE_PATH: join(tempDir(), "bridge.db") });
    expect(run.code, run.stderr).toBe(EX_CONFIG);
    expect(run.stderr).toMatch(/^ {2}MANAGE2_USER: is required: the catalogue's product 40 is bought from cPanel Manage2 /m);
    expect(run.stderr).toMatch(/^ {2}MANAGE2_PASSWORD: is required: the catalogue's product 40 is bought from cPanel Manage2 /m);
    expect(run.stderr).not.toMatch(/CLN_LOGIN|CLN_SECRET_KEY|RESELLER_API/);
    for (const secret of [RESELLER.RESELLER_API_TOKEN, CLN.CLN_SECRET_KEY, BRIDGE.ADMIN_TOKEN]) expect(run.stderr + run.stdout).not.toContain(secret);
  });

  it("a provider given without its secret stops start-up (78) naming the secret and what was set", async () => {
    const run = await runCli(["migrate"], { ...BRIDGE, MANAGE2_USER: MANAGE2.MANAGE2_USER, CLN_LOGIN: CLN.CLN_LOGIN, PRODUCTS_FILE: PROVIDERS_ONLY, DATABASE_PATH: join(tempDir(), "bridge.db") });
    expect(run.code).toBe(EX_CONFIG);
    const lines = run.stderr.split("\n").filter((l) => /^ {2}[A-Z]/.test(l)).map((l) => l.trim());
    expect(lines).toEqual([
      expect.stringMatching(/^MANAGE2_PASSWORD: is required: MANAGE2_USER is set; the catalogue's product 40 is bought from cPanel Manage2 /),
      expect.stringMatching(/^CLN_SECRET_KEY: is required: CLN_LOGIN is set; the catalogue's product 41 is bought from CloudLinux CLN /),
    ]);
  });

  it("a secret given without its user, or a URL alone, names what is missing", () => {
    expect(problems({ ...BRIDGE, ...RESELLER, PRODUCTS_FILE: RESELLER_CATALOGUE, MANAGE2_PASSWORD: "pw", CLN_URL: "https://cln.example" })).toEqual([
      expect.stringMatching(/^MANAGE2_USER: is required: MANAGE2_PASSWORD is set \(expected /),
      expect.stringMatching(/^CLN_LOGIN: is required: CLN_URL is set \(expected /),
      expect.stringMatching(/^CLN_SECRET_KEY: is required: CLN_URL is set \(expected /),
    ]);
  });

  it("the reseller's settings are not required when the catalogue has no reseller product", () => {
    const config = load({ ...BRIDGE, ...MANAGE2, ...CLN, PRODUCTS_FILE: PROVIDERS_ONLY });
    expect(config.sandbox).toBe(false);
    expect(config.upstream).toEqual({ mode: "none" });
    expect(config.providers).toEqual({
      reseller: null,
      manage2: { mode: "live", url: "https://manage2.cpanel.net", user: MANAGE2.MANAGE2_USER, password: MANAGE2.MANAGE2_PASSWORD, groupId: null },
      cln: { mode: "live", url: "https://cln.cloudlinux.com", login: CLN.CLN_LOGIN, secretKey: CLN.CLN_SECRET_KEY },
    });
  });

  it("a catalogue with a reseller product still needs the reseller's settings, and says which products need them", () => {
    const lines = problems({ ...BRIDGE, ...MANAGE2, ...CLN, PRODUCTS_FILE: MIXED });
    expect(lines).toEqual([
      expect.stringMatching(/^RESELLER_API_URL: is required: .* are set, which only a live configuration uses .*; the catalogue's product 12 is bought from the reseller \(expected /),
      expect.stringMatching(/^RESELLER_API_TOKEN: is required: .*; the catalogue's product 12 is bought from the reseller \(expected /),
    ]);
  });

  it("every provider the catalogue buys from, given whole, is a live configuration", () => {
    const config = load({ ...BRIDGE, ...RESELLER, ...MANAGE2, ...CLN, MANAGE2_URL: "https://manage2.example/", PRODUCTS_FILE: MIXED });
    expect(config.providers.reseller).toMatchObject({ mode: "live", apiUrl: RESELLER.RESELLER_API_URL });
    expect(config.providers.manage2).toMatchObject({ mode: "live", url: "https://manage2.example" });
    expect(config.upstream).toBe(config.providers.reseller);
  });

  it("any provider setting means live mode: a CLN_URL alone is no sandbox", () => {
    expect(keys(problems({ CLN_URL: "https://cln.example", PRODUCTS_FILE: CLN_ONLY }))).toEqual(["ADMIN_TOKEN", "CLN_LOGIN", "CLN_SECRET_KEY", "WEBHOOK_SECRETS"]);
    expect(keys(problems({ MANAGE2_GROUP_ID: "678", PRODUCTS_FILE: CLN_ONLY }))).toEqual(["ADMIN_TOKEN", "CLN_LOGIN", "CLN_SECRET_KEY", "MANAGE2_PASSWORD", "MANAGE2_USER", "WEBHOOK_SECRETS"]);
  });

  it("with no provider meant at all, a live setting still asks for the reseller", () => {
    expect(keys(problems({ ADMIN_TOKEN: BRIDGE.ADMIN_TOKEN, PRODUCTS_FILE: catalogue({}) }))).toEqual(["RESELLER_API_TOKEN", "RESELLER_API_URL", "WEBHOOK_SECRETS"]);
  });
});

describe("Manage2's group", () => {
  it("MANAGE2_GROUP_ID files a product without group_id in that group; a product's own group_id wins", () => {
    const file = catalogue({ "40": { provider: "manage2", type: "cpanel", package_id: 12345 }, "43": { provider: "manage2", type: "cpanel", package_id: 12346, group_id: 679 } });
    const config = load({ ...BRIDGE, ...MANAGE2, MANAGE2_GROUP_ID: "G678", PRODUCTS_FILE: file });
    expect(config.providers.manage2).toMatchObject({ groupId: 678 });
    expect(config.catalog.product("40")).toMatchObject({ purchase: { provider: "manage2", packageId: 12345, groupId: 678 } });
    expect(config.catalog.product("43")).toMatchObject({ purchase: { groupId: 679 } });
  });

  it("a MANAGE2_GROUP_ID that is no group id is one line naming it", () => {
    expect(problems({ ...BRIDGE, ...MANAGE2, MANAGE2_GROUP_ID: "reserve", PRODUCTS_FILE: PROVIDERS_ONLY }).filter((l) => !l.startsWith("CLN_"))).toEqual([
      expect.stringMatching(/^MANAGE2_GROUP_ID: must be a Manage2 group id, a whole number such as 678 \(or G678\) \(expected /),
    ]);
  });
});

describe("sandbox mode", () => {
  it("gives every provider a sandbox of its own, signed in to with its built-in credentials", () => {
    const config = load({ PRODUCTS_FILE: resolve(import.meta.dirname, "../../config/products.providers.json") });
    expect(config.sandbox).toBe(true);
    expect(config.providers).toEqual({
      reseller: { mode: "sandbox" },
      manage2: { mode: "sandbox", user: DEFAULT_MANAGE2_SANDBOX_CREDENTIALS.user, password: DEFAULT_MANAGE2_SANDBOX_CREDENTIALS.password, groupId: null },
      cln: { mode: "sandbox", login: DEFAULT_CLN_SANDBOX_ACCOUNT.login, secretKey: DEFAULT_CLN_SANDBOX_ACCOUNT.secretKey },
    });
    // The example catalogue of all three providers runs as it is.
    expect(config.catalog.product("40")).toMatchObject({ provider: "manage2" });
    expect(describeConfig(config).providers).toBe("reseller (sandbox), manage2 (sandbox), cln (sandbox)");
  });
});

describe("providers' secrets", () => {
  it("are masked where the configuration is described, and the users and addresses are not", () => {
    const config = load({ ...BRIDGE, ...MANAGE2, ...CLN, MANAGE2_URL: "https://m2user:m2UrlPassw0rd@manage2.example", PRODUCTS_FILE: PROVIDERS_ONLY });
    const described = describeConfig(config);
    const text = JSON.stringify(described);
    for (const secret of [MANAGE2.MANAGE2_PASSWORD, CLN.CLN_SECRET_KEY, "m2UrlPassw0rd"]) expect(text).not.toContain(secret);
    expect(described).toMatchObject({
      MANAGE2_USER: MANAGE2.MANAGE2_USER,
      MANAGE2_PASSWORD: "****",
      MANAGE2_URL: "https://****:****@manage2.example/",
      CLN_LOGIN: CLN.CLN_LOGIN,
      CLN_SECRET_KEY: "****",
      CLN_URL: "https://cln.cloudlinux.com/",
      providers: "manage2 (live), cln (live)",
    });
  });

  it("are in the logs' second net", () => {
    const config = load({ ...BRIDGE, ...MANAGE2, ...CLN, MANAGE2_URL: "https://m2user:m2UrlPassw0rd@manage2.example", PRODUCTS_FILE: PROVIDERS_ONLY });
    expect(secretValues(config)).toEqual(expect.arrayContaining([MANAGE2.MANAGE2_PASSWORD, CLN.CLN_SECRET_KEY, "m2UrlPassw0rd"]));
    expect(secretValues(config)).not.toContain(MANAGE2.MANAGE2_USER);
  });

  it("are refused in the settings file", () => {
    const file = join(tempDir(), "settings.json");
    writeFileSync(file, JSON.stringify({ MANAGE2_USER: MANAGE2.MANAGE2_USER, MANAGE2_PASSWORD: "in-a-file", CLN_SECRET_KEY: "also-in-a-file" }));
    expect(problems({ ...BRIDGE, ...CLN, MANAGE2_PASSWORD: MANAGE2.MANAGE2_PASSWORD, CONFIG_FILE: file, PRODUCTS_FILE: PROVIDERS_ONLY })).toEqual([
      expect.stringMatching(/^MANAGE2_PASSWORD: is a secret and must not be in /),
      expect.stringMatching(/^CLN_SECRET_KEY: is a secret and must not be in /),
    ]);
  });
});
