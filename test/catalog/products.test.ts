import { dirname, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { loadCatalog, parseCatalog, productsByProvider, SHIPPED_CATALOG_FILE, type Catalog } from "../../src/catalog/catalog.js";
import { renderInstallCommand } from "../../src/catalog/install-command.js";
import { cataloguePrices, sandboxPrices } from "../../src/catalog/prices.js";

/**
 * The catalogue's side of the licence providers (service-contract.md section 12): a product names
 * its provider and what it is bought as there, and every mistake is one line naming the product
 * and the field.
 */

/** The catalogue of `products`, which must be valid. */
function catalogOf(products: Record<string, unknown>, defaults = {}): Catalog {
  const result = parseCatalog({ products }, defaults);
  if (!result.ok) throw new Error(result.problems.join("\n"));
  return result.catalog;
}

/** The problem lines of a catalogue of `products`. */
function problemsOf(products: Record<string, unknown>): string[] {
  const result = parseCatalog({ products });
  return result.ok ? [] : result.problems;
}

const CPANEL_INSTALL = "cd /home && curl -o latest -L https://securedownloads.cpanel.net/latest && sh latest";

describe("what a catalogue product is bought as", () => {
  it("a product without a provider is the reseller's, bought as its type", () => {
    const catalog = catalogOf({ "12": { type: "cpanel" }, "13": { type: "litespeed", variant: "litespeed4" }, "20": { bundle: "cpanel-cloudlinux" } });
    expect(catalog.product("12")).toMatchObject({ provider: "reseller", kind: "licence", type: "cpanel", purchase: { provider: "reseller", sku: "cpanel", bundle: false, variant: null }, installCommand: null });
    expect(catalog.product("13")).toMatchObject({ provider: "reseller", variant: "litespeed4", purchase: { provider: "reseller", sku: "litespeed", variant: "litespeed4" } });
    expect(catalog.product("20")).toMatchObject({ provider: "reseller", kind: "bundle", purchase: { provider: "reseller", sku: "cpanel-cloudlinux", bundle: true } });
  });

  it("a Manage2 product is bought as its package, in its own group or else MANAGE2_GROUP_ID's, with cPanel's install command", () => {
    const catalog = catalogOf(
      {
        "40": { provider: "manage2", type: "cpanel", package_id: 12345, group_id: 678 },
        "43": { provider: "manage2", type: "cpanel", package_id: "P12346" },
      },
      { manage2GroupId: 900 },
    );
    expect(catalog.product("40")).toEqual({
      kind: "licence",
      productId: "40",
      provider: "manage2",
      type: "cpanel",
      variant: null,
      purchase: { provider: "manage2", sku: "12345", packageId: 12345, groupId: 678 },
      maxIpChanges: null,
      pricePerMonth: null,
      installCommand: CPANEL_INSTALL,
    });
    expect(catalog.product("43")).toMatchObject({ purchase: { packageId: 12346, groupId: 900 } });
  });

  it("a Manage2 product with no group and no MANAGE2_GROUP_ID goes to the account's default group", () => {
    expect(catalogOf({ "40": { provider: "manage2", type: "cpanel", package_id: 12345 } }).product("40")).toMatchObject({ purchase: { groupId: null } });
  });

  it("a CLN product is bought as its CLN type, with the install command of CloudLinux's guide", () => {
    const catalog = catalogOf({
      "41": { provider: "cln", type: "cloudlinux", cln_type: 1 },
      "42": { provider: "cln", type: "imunify360", cln_type: 41, price_per_month: 4 },
      "44": { provider: "cln", type: "kernelcare", cln_type: 16 },
    });
    expect(catalog.product("41")).toMatchObject({
      provider: "cln",
      type: "cloudlinux",
      purchase: { provider: "cln", sku: "1", clnType: 1 },
      installCommand: "wget https://repo.cloudlinux.com/cloudlinux/sources/cln/cldeploy && sh cldeploy -i",
    });
    expect(catalog.product("42")).toMatchObject({ purchase: { sku: "41", clnType: 41 }, pricePerMonth: 4, installCommand: expect.stringContaining("bash i360deploy.sh") });
    expect(catalog.product("44")).toMatchObject({ installCommand: "curl -s -L https://kernelcare.com/installer | bash" });
  });

  it("a CLN type whose guide gives no command for an IP licence has none unless the catalogue gives one", () => {
    const catalog = catalogOf({ "45": { provider: "cln", type: "cloudlinux", cln_type: 4 }, "46": { provider: "cln", type: "cloudlinux", cln_type: 4, install_command: "sh /root/solo.sh" } });
    expect(catalog.product("45")!.installCommand).toBeNull();
    expect(catalog.product("46")!.installCommand).toBe("sh /root/solo.sh");
  });

  it("the catalogue's install_command is a template in which {ip} stands for the licence's IP", () => {
    const product = catalogOf({ "40": { provider: "manage2", type: "cpanel", package_id: 12345, install_command: "curl -s https://deploy.example/{ip}/cpanel | sh -s -- ${HOME} {ip}" } }).product("40")!;
    expect(renderInstallCommand(product.installCommand!, "203.0.113.7")).toBe("curl -s https://deploy.example/203.0.113.7/cpanel | sh -s -- ${HOME} 203.0.113.7");
  });

  it("lists which providers the catalogue buys from, with their products", () => {
    const catalog = catalogOf({ "12": { type: "cpanel" }, "40": { provider: "manage2", type: "cpanel", package_id: 1 }, "41": { provider: "cln", type: "cloudlinux", cln_type: 1 }, "42": { provider: "cln", type: "imunify360", cln_type: 41 } });
    expect(Object.fromEntries(productsByProvider(catalog))).toEqual({ reseller: ["12"], manage2: ["40"], cln: ["41", "42"] });
  });
});

describe("a catalogue product that cannot be bought is one line naming the product and the field", () => {
  it("an unknown provider names provider", () => {
    expect(problemsOf({ "40": { provider: "cpanel", type: "cpanel" } })).toEqual([expect.stringMatching(/^products\.40\.provider: must be one of reseller, manage2, cln/)]);
  });

  it("a type the bridge does not know names type, not the whole entry", () => {
    expect(problemsOf({ "2": { type: "nope" } })).toEqual([expect.stringMatching(/^products\.2\.type: /)]);
  });

  it("a Manage2 product without package_id names package_id", () => {
    expect(problemsOf({ "40": { provider: "manage2", type: "cpanel" } })).toEqual(["products.40.package_id: is required for provider manage2: the Manage2 package to buy, e.g. 12345"]);
  });

  it("a package_id or group_id that is no Manage2 id names the field", () => {
    expect(problemsOf({ "40": { provider: "manage2", type: "cpanel", package_id: "cpanel-pro", group_id: -3 } })).toEqual([
      "products.40.package_id: must be a Manage2 package id, a whole number such as 12345 (or P12345)",
      "products.40.group_id: must be a Manage2 group id, a whole number such as 678 (or G678)",
    ]);
  });

  it("a Manage2 product of a type Manage2 does not sell names type", () => {
    expect(problemsOf({ "40": { provider: "manage2", type: "plesk", package_id: 1 } })).toEqual([
      "products.40.type: is not sold through cPanel's Manage2 (the bridge's types it sells: cpanel, cloudlinux, kernelcare, litespeed, imunify360, jetbackup)",
    ]);
  });

  it("a Manage2 or CLN product without type names type", () => {
    expect(problemsOf({ "40": { provider: "manage2", package_id: 1 }, "41": { provider: "cln", cln_type: 1 } })).toEqual([
      'products.40.type: is required: what the customer gets, e.g. "cpanel"',
      'products.41.type: is required: what the customer gets, e.g. "cloudlinux"',
    ]);
  });

  it("a CLN product without cln_type, or with one CloudLinux does not list, names cln_type", () => {
    const lines = problemsOf({ "41": { provider: "cln", type: "cloudlinux" }, "42": { provider: "cln", type: "cloudlinux", cln_type: 2 }, "43": { provider: "cln", type: "cloudlinux", cln_type: "one" } });
    expect(lines).toEqual([
      "products.41.cln_type: is required for provider cln: the CLN licence type to buy, e.g. 1 (CloudLinux OS) or 41 (Imunify360)",
      expect.stringMatching(/^products\.42\.cln_type: is not a CLN IP licence type \(CloudLinux's list: 1, 3, 4, 5, 16, /),
      "products.43.cln_type: must be a CLN licence type number, e.g. 1 or 41",
    ]);
  });

  it("a cln_type that is not the product's type names cln_type, with the type it is and the cln_types that fit", () => {
    expect(problemsOf({ "41": { provider: "cln", type: "cloudlinux", cln_type: 41 } })).toEqual([
      'products.41.cln_type: 41 is Imunify for single user, of type imunify360, but this product\'s type is "cloudlinux": give type "imunify360", or a cloudlinux cln_type (1, 4, 5, 1002)',
    ]);
    expect(problemsOf({ "42": { provider: "cln", type: "cpanel", cln_type: 1 } })).toEqual([
      'products.42.cln_type: 1 is CloudLinux OS Legacy, of type cloudlinux, but this product\'s type is "cpanel": give type "cloudlinux" (CLN sells no cpanel licence)',
    ]);
  });

  it("a cln_type the bridge has no product type for (ImunifyAV+, ELS) is refused", () => {
    expect(problemsOf({ "43": { provider: "cln", type: "imunify360", cln_type: 40 } })).toEqual(["products.43.cln_type: 40 is Imunify AV Plus, which is no product type of the bridge yet"]);
  });

  it("bundles and LiteSpeed variants are the reseller's only", () => {
    expect(problemsOf({ "40": { provider: "manage2", type: "litespeed", package_id: 1, variant: "litespeed8" }, "41": { provider: "cln", bundle: "cpanel-cloudlinux", type: "cloudlinux", cln_type: 1 } })).toEqual([
      "products.40.variant: LiteSpeed variants are the reseller's only (a manage2 product's package_id says what it is)",
      "products.41.bundle: bundles are the reseller's only (a cln product is one licence)",
    ]);
  });

  it("a field of another provider names the field and whose it is", () => {
    expect(problemsOf({ "12": { type: "cpanel", package_id: 1, install_command: "sh x" }, "41": { provider: "cln", type: "cloudlinux", cln_type: 1, group_id: 678 } })).toEqual([
      "products.12.package_id: is only for provider manage2 (this product's provider is reseller)",
      "products.12.install_command: is only for providers manage2 and cln (the reseller's API gives the install command)",
      "products.41.group_id: is only for provider manage2 (this product's provider is cln)",
    ]);
  });

  it("a field no product has is named", () => {
    expect(problemsOf({ "12": { type: "cpanel", cln: 1 } })).toEqual([expect.stringMatching(/^products\.12\.cln: is not a catalogue field \(one of provider, type, /)]);
  });

  it("an install_command with a placeholder other than {ip}, or on more than one line, names install_command", () => {
    expect(problemsOf({ "40": { provider: "manage2", type: "cpanel", package_id: 1, install_command: "sh install.sh {IP} {ip}" }, "41": { provider: "cln", type: "cloudlinux", cln_type: 1, install_command: "sh a\nreboot" } })).toEqual([
      "products.40.install_command: has {IP}: the only placeholder is {ip}",
      "products.41.install_command: must be one line without control characters",
    ]);
  });

  it("reports every problem of the catalogue at once, one line each", () => {
    const lines = problemsOf({
      "40": { provider: "manage2", type: "plesk" },
      "41": { provider: "cln", type: "cloudlinux", cln_type: 41, variant: "litespeed" },
      "12": { type: "cpanel", variant: "litespeed4" },
    });
    expect(lines.map((l) => l.split(":")[0])).toEqual(["products.12.variant", "products.40.type", "products.40.package_id", "products.41.variant", "products.41.cln_type"]);
  });
});

describe("prices of providers' products", () => {
  const catalog = catalogOf({
    "12": { type: "cpanel", price_per_month: 14 },
    "40": { provider: "manage2", type: "cpanel", package_id: 12345, price_per_month: 15 },
    "41": { provider: "cln", type: "cloudlinux", cln_type: 1, price_per_month: 10 },
    "47": { provider: "cln", type: "imunify360", cln_type: 41 },
  });

  it("a Manage2 or CLN product costs its price_per_month, in sandbox mode too; without one it is unknown", () => {
    for (const prices of [sandboxPrices(catalog), cataloguePrices(catalog)]) {
      expect([prices.product("40"), prices.product("41"), prices.product("47")], prices.source).toEqual([15, 10, null]);
    }
  });

  it("an orphan at the reseller is priced by the reseller's products of its type, never by a CLN product's", () => {
    expect(cataloguePrices(catalog).licenseType("cpanel")).toBe(14);
    expect(cataloguePrices(catalog).licenseType("cloudlinux")).toBeNull();
  });
});

describe("the shipped catalogues", () => {
  it("config/products.json is the reseller's alone, so a bridge configured for the reseller alone starts with it", () => {
    const result = loadCatalog(SHIPPED_CATALOG_FILE);
    if (!result.ok) throw new Error(result.problems.join("\n"));
    const providers = new Set(result.catalog.productIds().map((id) => result.catalog.product(id)!.provider));
    expect([...providers]).toEqual(["reseller"]);
    expect(result.catalog.product("12")).toMatchObject({ provider: "reseller", type: "cpanel" });
  });

  it("config/products.providers.json has a Manage2 cPanel product and CLN CloudLinux OS and Imunify360 products beside the reseller's, as section 12's example", () => {
    const result = loadCatalog(resolve(dirname(SHIPPED_CATALOG_FILE), "products.providers.json"));
    if (!result.ok) throw new Error(result.problems.join("\n"));
    expect(result.catalog.product("40")).toMatchObject({ provider: "manage2", type: "cpanel", purchase: { packageId: 12345, groupId: 678 } });
    expect(result.catalog.product("41")).toMatchObject({ provider: "cln", type: "cloudlinux", purchase: { clnType: 1 } });
    expect(result.catalog.product("42")).toMatchObject({ provider: "cln", type: "imunify360", purchase: { clnType: 41 } });
    expect(result.catalog.product("12")).toMatchObject({ provider: "reseller", type: "cpanel" });
  });
});
