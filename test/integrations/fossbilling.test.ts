/**
 * The FOSSBilling module (integrations/fossbilling/src/modules/Servicelicensebridge/, PHP) run for
 * real by php-cli against a running bridge and reseller sandbox, through a stand-in FOSSBilling
 * 0.8.5 (integrations/fossbilling/tests/): a fake FOSSBilling root whose Composer autoloader,
 * FOSSBilling\Module, Extensions page, API dispatcher, cart, order flows and paid invoices load and
 * call the module as the release does, on `php -n -d extension=curl` with PHP's own include_path.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MODULE_VERSION } from "../../src/provisioning/module-clients.js";
import { TEST_PROVISIONING_TOKEN } from "../helpers/bridge.js";
import { untilIdle, upstreamCalls, usePair, waitStatus, type Pair } from "../helpers/e2e-harness.js";
import { INTEGRATIONS, phpUnavailable, runPhp } from "../helpers/php.js";

const STANDIN = join(INTEGRATIONS, "fossbilling/tests/standin.php");
const MODULE = join(INTEGRATIONS, "fossbilling/src/modules/Servicelicensebridge");
const skip = phpUnavailable();

/** The stand-in's FOSSBilling products (standin.php install) and the bridge products the tests give them. */
const CPANEL = 5; // type licensebridge -> bridge product 12 (no IP change limit)
const LITESPEED = 6; // type licensebridge -> 13 (max_ip_changes 3)
const UNSET = 9; // type licensebridge, no bridge product
const LEGACY = 20; // type custom, plug-in "LicenseBridge" (the old plug-in)
const MISTYPED = 21; // type custom, plug-in "LicenceBridge" (a typo)

interface ApiAnswer {
  http: number;
  body: { result: unknown; error: { message: string; code: number } | null };
  class?: string;
}

interface Order {
  id: string;
  status: string;
  expires_at: string | null;
  service_id: string | null;
  service_type: string;
  config: string;
}

interface Run {
  api: ApiAnswer | null;
  uncaught: { class: string; message: string } | null;
  result: unknown;
  order: Order | null;
  service: Record<string, string | null> | null;
  history: { status: string; notes: string }[];
  include_path: string;
  emails: { code: string; service: Record<string, unknown> | null }[];
}

interface SetupOptions {
  /** Activate the extension on the Extensions page (default true). */
  activate?: boolean;
  /** The settings page's form (default: the test bridge's URL and token); null: not saved. */
  settings?: Record<string, unknown> | null;
  /** Give products 5 and 6 their bridge products (default true). */
  products?: boolean;
}

/** One fake FOSSBilling installation; every php run's output is kept for the token checks. */
class FakeFossbilling {
  readonly root: string;
  readonly outputs: string[] = [];
  /** PHP's own warning before an uncaught \Error is expected in the runs that test that. */
  stderrAllowed: RegExp | null = null;

  constructor(private readonly pair: Pair) {
    this.root = join(mkdtempSync(join(tmpdir(), "lb-fossbilling-")), "fossbilling");
  }

  async install(options: { legacy_plugin?: boolean } = {}): Promise<this> {
    await this.php(["install", JSON.stringify(options)]);
    return this;
  }

  /** What an operator does after the upload (README, "Install"): activate, settings, products. */
  async setup(options: SetupOptions = {}): Promise<this> {
    if (options.activate !== false) result(await this.admin("extension_activate", { id: "servicelicensebridge", type: "mod" }));
    const settings = options.settings === undefined ? { url: this.pair.bridge.url, token: TEST_PROVISIONING_TOKEN, timeout: 30, service_prefix: "", log_calls: 0 } : options.settings;
    if (settings !== null) expect(result(await this.admin("servicelicensebridge_settings_save", settings))).toBe(true);
    if (options.products !== false) {
      result(await this.admin("product_update_config", { id: CPANEL, config: { package_identifier: "12" } }));
      result(await this.admin("product_update_config", { id: LITESPEED, config: { package_identifier: "13" } }));
    }
    return this;
  }

  async php(args: string[], env: Record<string, string> = {}): Promise<string> {
    const run = await runPhp(STANDIN, args, { LB_FB_ROOT: this.root, ...env });
    this.outputs.push(run.stdout, run.stderr);
    if (!(this.stderrAllowed && this.stderrAllowed.test(run.stderr))) expect(run.stderr, `php ${args[0]} wrote to stderr`).toBe("");
    expect(run.code, run.stdout).toBe(0);
    return run.stdout;
  }

  async run(args: string[], env: Record<string, string> = {}): Promise<Run> {
    return JSON.parse(await this.php(args, env)) as Run;
  }

  admin(call: string, data: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<Run> {
    return this.run(["admin", call, JSON.stringify(data)], env);
  }

  client(call: string, data: Record<string, unknown>, clientId = 1): Promise<Run> {
    return this.run(["client", String(clientId), call, JSON.stringify(data)]);
  }

  /** The order form (product configuration) put in the cart, then the checkout. */
  checkout(productId: number, form: Record<string, unknown>, clientId = 1): Promise<Run> {
    return this.run(["checkout", String(clientId), String(productId), JSON.stringify(form)]);
  }

  invoicePaid(orderId: number, task: "activate" | "renew"): Promise<Run> {
    return this.run(["invoice", String(orderId), task]);
  }

  async template(area: "client" | "admin", name: string): Promise<string | null> {
    return (await this.run(["template", area, name])).result as string | null;
  }

  /** A pending_setup order (asserted). */
  async order(ip: string, productId = CPANEL, period = "1M"): Promise<number> {
    return result<number>(await this.checkout(productId, { period, ip }));
  }

  /** An order activated through the admin API (asserted). */
  async activeOrder(ip: string, productId = CPANEL): Promise<number> {
    const id = await this.order(ip, productId);
    const run = await this.admin("order_activate", { id });
    expect(run.api?.body.error, JSON.stringify(run.history)).toBeNull();
    expect(run.order?.status).toBe("active");
    return id;
  }

  /** Every file under data/log (FOSSBilling's php_error.log). */
  logs(): string {
    const all: string[] = [];
    const walk = (d: string) => {
      for (const name of readdirSync(d)) {
        const p = join(d, name);
        if (statSync(p).isDirectory()) walk(p);
        else all.push(readFileSync(p, "utf8"));
      }
    };
    walk(join(this.root, "data/log"));
    return all.join("\n");
  }

  /** Everything the module could have put the token in: outputs, logs, the database. */
  everything(): string {
    return [...this.outputs, this.logs(), readFileSync(join(this.root, "state.json"), "utf8")].join("\n");
  }

  cleanup(): void {
    rmSync(join(this.root, ".."), { recursive: true, force: true });
  }
}

function result<T = Record<string, unknown>>(run: Run): T {
  expect(run.uncaught, JSON.stringify(run.uncaught)).toBeNull();
  expect(run.api?.body.error ?? null, JSON.stringify(run.api)).toBeNull();
  return run.api!.body.result as T;
}
const error = (run: Run) => {
  expect(run.api?.body.error, JSON.stringify(run)).not.toBeNull();
  return { ...run.api!.body.error!, http: run.api!.http, class: run.api!.class };
};
/** FOSSBilling's dates are server-local (UTC here), "Y-m-d H:i:s". */
const ms = (fbDate: string | null | undefined) => Date.parse(`${fbDate!.replace(" ", "T")}Z`);

function useFossbilling(env?: Record<string, string>) {
  const pair = usePair(env ? { env } : {});
  const made: FakeFossbilling[] = [];
  afterEach(() => {
    for (const fb of made.splice(0)) fb.cleanup();
  });
  return {
    pair,
    /** Installed and set up as the README says (activated, settings, products 5 and 6). */
    fossbilling: async (setup: SetupOptions = {}, install: { legacy_plugin?: boolean } = {}) => {
      const fb = new FakeFossbilling(pair());
      made.push(fb);
      await fb.install(install);
      return fb.setup(setup);
    },
    /** Only the files uploaded: nothing activated or set up. */
    uploaded: async (install: { legacy_plugin?: boolean } = {}) => {
      const fb = new FakeFossbilling(pair());
      made.push(fb);
      return fb.install(install);
    },
  };
}

describe("the FOSSBilling module's files", () => {
  it("is a FOSSBilling extension of type mod: modules/Servicelicensebridge with its manifest, service, API and templates", () => {
    const manifest = JSON.parse(readFileSync(join(MODULE, "manifest.json"), "utf8")) as Record<string, unknown>;
    expect(manifest).toMatchObject({ id: "servicelicensebridge", type: "mod", version: MODULE_VERSION, minimum_fossbilling_version: "0.8.5" });
    const service = readFileSync(join(MODULE, "Service.php"), "utf8");
    expect(service).toMatch(/^namespace Box\\Mod\\Servicelicensebridge;$/m);
    expect(service).toMatch(/^class Service implements \\FOSSBilling\\InjectionAwareInterface$/m);
    for (const role of ["Admin", "Client"]) {
      expect(readFileSync(join(MODULE, `Api/${role}.php`), "utf8")).toMatch(new RegExp(`^class ${role} extends \\\\FOSSBilling\\\\Api\\\\AbstractApi$`, "m"));
    }
    for (const t of [
      "templates/client/mod_servicelicensebridge_manage.html.twig",
      "templates/client/mod_servicelicensebridge_order_form.html.twig",
      "templates/admin/mod_servicelicensebridge_manage.html.twig",
      "templates/admin/mod_servicelicensebridge_config.html.twig",
      "templates/admin/mod_servicelicensebridge_settings.html.twig",
    ]) {
      expect(statSync(join(MODULE, t)).isFile(), t).toBe(true);
    }
    // The old Servicecustom plug-in and the theme copy are gone.
    expect(readdirSync(join(INTEGRATIONS, "fossbilling")).sort()).toEqual(["README.md", "src", "tests"]);
  });

  it("the templates call only API methods the module has, and read only fields its answers carry", () => {
    const methods = (role: "Admin" | "Client") => [...readFileSync(join(MODULE, `Api/${role}.php`), "utf8").matchAll(/public function (\w+)\(/g)].map((m) => m[1]);
    const read = (t: string) => readFileSync(join(MODULE, "templates", t), "utf8");
    const calls = (twig: string, role: "client" | "admin") => [
      ...new Set([
        ...[...twig.matchAll(new RegExp(`\\b${role}\\.servicelicensebridge_(\\w+)`, "g"))].map((m) => m[1]),
        ...[...twig.matchAll(/'servicelicensebridge\/(\w+)'\|api_url/g)].map((m) => m[1]),
      ]),
    ];
    const names = (twig: string) => [...twig.matchAll(/name="([\w[\]]+)"/g)].map((m) => m[1]).sort();

    const clientPage = read("client/mod_servicelicensebridge_manage.html.twig");
    expect(calls(clientPage, "client").sort()).toEqual(["change_ip", "license"]);
    for (const m of calls(clientPage, "client")) expect(methods("Client")).toContain(m);
    expect(names(clientPage)).toEqual(["new_ip", "order_id"]);

    const adminPage = read("admin/mod_servicelicensebridge_manage.html.twig");
    expect(calls(adminPage, "admin").sort()).toEqual(["change_ip", "change_package", "license"]);
    for (const m of calls(adminPage, "admin")) expect(methods("Admin")).toContain(m);
    expect(names(adminPage)).toEqual(["new_ip", "order_id", "order_id", "package_identifier"]);

    const settingsPage = read("admin/mod_servicelicensebridge_settings.html.twig");
    expect(calls(settingsPage, "admin").sort()).toEqual(["settings", "settings_save", "test_connection"]);
    for (const m of calls(settingsPage, "admin")) expect(methods("Admin")).toContain(m);
    expect([...new Set(names(settingsPage))]).toEqual(["log_calls", "service_prefix", "timeout", "token", "url"]);
    expect(settingsPage).not.toMatch(/settings\.token\b/);

    expect(names(read("admin/mod_servicelicensebridge_config.html.twig"))).toEqual(["config[package_identifier]", "id"]);
    expect(names(read("client/mod_servicelicensebridge_order_form.html.twig"))).toEqual(["ip"]);
  });
});

describe.skipIf(skip !== null)(`FOSSBilling module against a running bridge${skip ? ` [skipped: ${skip}]` : ""}`, () => {
  const { pair, fossbilling, uploaded } = useFossbilling();

  it("installs as FOSSBilling installs an extension: listed once uploaded, activated on the Extensions page (which creates its table), then a product type whose pages find its templates", async () => {
    const fb = await uploaded();
    const listed = result<Record<string, unknown>[]>(await fb.admin("extension_get_list"));
    expect(listed).toEqual([expect.objectContaining({ id: "servicelicensebridge", type: "mod", name: "LicenseBridge licences", version: MODULE_VERSION, status: null })]);
    // Not active yet: no product type, its API refused, Twig does not look in its folder.
    expect(result(await fb.admin("product_get_types"))).not.toHaveProperty("licensebridge");
    expect(error(await fb.admin("servicelicensebridge_settings"))).toMatchObject({ code: 715 });
    expect(await fb.template("client", "mod_servicelicensebridge_manage.html.twig")).toBeNull();

    expect(result(await fb.admin("extension_activate", { id: "servicelicensebridge", type: "mod" }))).toMatchObject({ id: "servicelicensebridge", has_settings: true });
    expect(result(await fb.admin("product_get_types"))).toMatchObject({ licensebridge: "Licensebridge" });
    const state = JSON.parse(readFileSync(join(fb.root, "state.json"), "utf8")) as { tables: Record<string, string[] | null> };
    expect(state.tables.service_licensebridge).toEqual(["id", "client_id", "order_id", "service_identifier", "package_identifier", "ip", "license_key", "created_at", "updated_at"]);
    // The order pages and the product page include the module's own templates: nothing is copied into a theme.
    for (const [area, name] of [
      ["client", "mod_servicelicensebridge_manage.html.twig"],
      ["client", "mod_servicelicensebridge_order_form.html.twig"],
      ["admin", "mod_servicelicensebridge_manage.html.twig"],
      ["admin", "mod_servicelicensebridge_config.html.twig"],
      ["admin", "mod_servicelicensebridge_settings.html.twig"],
    ] as const) {
      expect(await fb.template(area, name)).toBe(`modules/Servicelicensebridge/templates/${area}/${name}`);
    }

    // Then it works with PHP's own include_path, from any working directory (cron's is anywhere).
    await fb.setup({ activate: false });
    const id = await fb.order("203.0.113.9");
    const run = await fb.admin("order_activate", { id }, { LB_FB_CWD: "/" });
    expect(result(run)).toBe(true);
    expect(run.include_path).toBe(".:/usr/share/php");
    expect(run.order).toMatchObject({ status: "active", service_type: "licensebridge" });
    expect(pair().sb.sandbox.ledger()).toHaveLength(1);
  });

  it("where the old plug-in died on a stock include_path, or activated a mistyped one with nothing bought, a product the module cannot serve fails loudly with nothing bought", async () => {
    const fb = await fossbilling({}, { legacy_plugin: true });
    fb.stderrAllowed = /^Warning: require_once\(Plugin\/LicenseBridge\/LicenseBridge\.php\): Failed to open stream/;

    // The old Servicecustom plug-in: FOSSBilling's relative require_once cannot find it.
    const legacy = await fb.admin("order_activate", { id: result<number>(await fb.checkout(LEGACY, { period: "1M", ip: "203.0.113.1" })) });
    expect(legacy.api).toBeNull();
    expect(legacy.uncaught).toEqual({ class: "Error", message: "Failed opening required 'Plugin/LicenseBridge/LicenseBridge.php' (include_path='.:/usr/share/php')" });
    expect(existsSync(join(fb.root, "legacy-plugin-ran"))).toBe(false);
    fb.stderrAllowed = null;
    // A mistyped plug-in name: FOSSBilling logs it (DEBUG only) and activates the order anyway.
    const mistyped = await fb.admin("order_activate", { id: result<number>(await fb.checkout(MISTYPED, { period: "1M", ip: "203.0.113.2" })) });
    expect(result(mistyped)).toBe(true);
    expect(mistyped.order?.status).toBe("active");
    expect(pair().sb.sandbox.requests()).toEqual([]);

    // The module: a product nobody gave a bridge product is refused in the cart ...
    expect(error(await fb.checkout(UNSET, { period: "1M", ip: "203.0.113.3" }))).toMatchObject({
      class: "FOSSBilling\\InformationException",
      message: "This product cannot be ordered yet: its licence is not set up. Please contact us.",
    });
    expect(fb.logs()).toMatch(/LicenseBridge: product #9 \(Licence nobody set up\) was put in a cart, but it has no bridge product/);
    // ... and at activation, when its bridge product was removed after the order was placed.
    const id = await fb.order("203.0.113.4");
    result(await fb.admin("product_update_config", { id: CPANEL, config: { package_identifier: "" } }));
    const failed = await fb.admin("order_activate", { id });
    expect(error(failed)).toMatchObject({ class: "FOSSBilling\\InformationException", message: expect.stringMatching(/^LicenseBridge: product #5 "cPanel licence" has no bridge product, so nothing was bought for order #\d+\. Set "Bridge product" on the product's Configuration tab/) });
    expect(failed.order?.status).toBe("failed_setup");
    expect(failed.history.at(-1)).toMatchObject({ status: "failed_setup", notes: expect.stringContaining("has no bridge product") });
    // An unconfigured module (no settings saved) fails the same way.
    const bare = await fossbilling({ settings: null });
    const unset = await bare.admin("order_activate", { id: await bare.order("203.0.113.5") });
    expect(error(unset)).toMatchObject({ class: "FOSSBilling\\Exception", message: expect.stringMatching(/^LicenseBridge is not set up: 'Bridge URL' must be the bridge's address.*'Token' must be the bridge's PROVISIONING_TOKEN\. Set it in Extensions -> LicenseBridge licences -> Settings\.$/) });
    expect(unset.order?.status).toBe("failed_setup");
    expect(pair().sb.sandbox.requests()).toEqual([]);
  });

  it("activating an order buys the licence for the form's IP and the product's bridge product, once; the bridge records the module", async () => {
    const fb = await fossbilling();
    const id = await fb.order("203.0.113.10");
    const run = await fb.admin("order_activate", { id });

    expect(result(run)).toBe(true);
    expect(run.order).toMatchObject({ status: "active", service_type: "licensebridge", service_id: run.service!.id });
    const svc = (await pair().bridge.service.services.get(String(id)))!;
    expect(svc).toMatchObject({ status: "active", ip: "203.0.113.10", product_id: "12", billing_cycle: "monthly", customer_email: "ann@example.com", customer_name: "Ann Example" });
    expect(run.service).toMatchObject({ order_id: String(id), service_identifier: String(id), package_identifier: "12", ip: "203.0.113.10", license_key: svc.license_key });
    // The bridge is paid until the expiry FOSSBilling set on activation.
    expect(Math.abs(svc.paid_until! - ms(run.order!.expires_at))).toBeLessThan(5_000);
    expect(pair().sb.sandbox.ledger()).toMatchObject([{ op: "register", ip: "203.0.113.10", type: "cpanel" }]);
    // The activation e-mail is given the module's toApiArray.
    expect(run.emails).toEqual([{ code: "mod_servicelicensebridge_activated", service: expect.objectContaining({ license_key: svc.license_key, ip: "203.0.113.10" }) }]);
    // Every call said which module made it.
    expect((await pair().bridge.admin(`/admin/services/${id}`)).body.module).toBe(`fossbilling/${MODULE_VERSION}`);

    // Activating an active order again changes nothing (FOSSBilling does not even call the module).
    await fb.admin("order_activate", { id });
    expect(pair().sb.sandbox.ledger()).toHaveLength(1);
  });

  it("a paid invoice activates the order the same way", async () => {
    const fb = await fossbilling();
    const id = await fb.order("203.0.113.11", LITESPEED);
    const run = await fb.invoicePaid(id, "activate");
    expect(run.order?.status).toBe("active");
    expect(await pair().bridge.service.services.get(String(id))).toMatchObject({ status: "active", product_id: "13", type: "litespeed" });
  });

  it("suspend, unsuspend and renew reach the bridge; a paid renewal of a suspended order unsuspends, then renews", async () => {
    const fb = await fossbilling();
    const id = await fb.activeOrder("203.0.113.12");
    const bridge = pair().bridge;
    const row = async () => (await bridge.service.services.get(String(id)))!;

    const suspended = await fb.admin("order_suspend", { id, reason: "overdue" });
    expect(result(suspended)).toBe(true);
    expect(suspended.order?.status).toBe("suspended");
    expect((await row()).status).toBe("suspended");
    expect(upstreamCalls(pair().sb, "suspend")).toHaveLength(1);

    const unsuspended = await fb.admin("order_unsuspend", { id });
    expect(unsuspended.order?.status).toBe("active");
    expect((await row()).status).toBe("active");
    expect(upstreamCalls(pair().sb, "unsuspend")).toHaveLength(1);

    const before = (await fb.admin("order_service", { id })).order!.expires_at;
    const renewed = await fb.admin("order_renew", { id });
    expect(result(renewed)).toBe(true);
    expect(ms(renewed.order!.expires_at)).toBeGreaterThan(ms(before));
    // The bridge records the payment up to the expiry FOSSBilling moved the order to.
    expect(Math.abs((await row()).paid_until! - ms(renewed.order!.expires_at))).toBeLessThan(5_000);

    await fb.admin("order_suspend", { id });
    const paid = await fb.invoicePaid(id, "renew");
    expect(paid.order?.status).toBe("active");
    expect((await row()).status).toBe("active");
    expect(Math.abs((await row()).paid_until! - ms(paid.order!.expires_at))).toBeLessThan(5_000);

    // An admin's Renew of a suspended order makes it active without an unsuspend: the module's
    // renew unsuspends the licence itself.
    await fb.admin("order_suspend", { id });
    const unsuspendsBefore = upstreamCalls(pair().sb, "unsuspend").length;
    const adminRenewed = await fb.admin("order_renew", { id });
    expect(adminRenewed.order?.status).toBe("active");
    expect((await row()).status).toBe("active");
    expect(upstreamCalls(pair().sb, "unsuspend")).toHaveLength(unsuspendsBefore + 1);
    expect(pair().sb.sandbox.ledger()).toHaveLength(1);
  });

  it("a renewal follows the order module's renewal logic: with 'from today' the bridge is paid to the expiry FOSSBilling sets", async () => {
    const fb = await fossbilling();
    const id = await fb.activeOrder("203.0.113.19");
    // The order lapsed ten days ago without being suspended; FOSSBilling renews "from today".
    result(await fb.admin("order_update", { id, expires_at: new Date(Date.now() - 10 * 86_400_000).toISOString() }));
    result(await fb.admin("extension_config_save", { ext: "mod_order", order_renewal_logic: "from_today" }));
    const renewed = await fb.admin("order_renew", { id });
    expect(result(renewed)).toBe(true);
    expect(ms(renewed.order!.expires_at)).toBeGreaterThan(Date.now() + 27 * 86_400_000);
    expect(Math.abs((await pair().bridge.service.services.get(String(id)))!.paid_until! - ms(renewed.order!.expires_at))).toBeLessThan(5_000);
  });

  it("cancel terminates, uncancel re-activates without buying again, delete terminates", async () => {
    const fb = await fossbilling();
    const id = await fb.activeOrder("203.0.113.13");
    const row = async () => (await pair().bridge.service.services.get(String(id)))!;

    const canceled = await fb.admin("order_cancel", { id });
    expect(result(canceled)).toBe(true);
    expect(canceled.order?.status).toBe("canceled");
    expect((await row()).status).toBe("terminated");

    const uncanceled = await fb.admin("order_uncancel", { id });
    expect(result(uncanceled)).toBe(true);
    expect(uncanceled.order?.status).toBe("active");
    expect(await row()).toMatchObject({ status: "active", ip: "203.0.113.13" });
    expect(Math.abs((await row()).paid_until! - ms(uncanceled.order!.expires_at))).toBeLessThan(5_000);
    expect(pair().sb.sandbox.ledger()).toHaveLength(1);

    const deleted = await fb.admin("order_delete", { id });
    expect(result(deleted)).toBe(true);
    expect(deleted.order).toBeNull();
    expect(deleted.service).toBeNull();
    expect((await row()).status).toBe("terminated");
  });

  it("uncancel orders the licence again on the IP the customer moved it to, not the order form's", async () => {
    const fb = await fossbilling();
    const id = await fb.activeOrder("203.0.113.14", LITESPEED);
    result(await fb.client("servicelicensebridge_change_ip", { order_id: id, new_ip: "203.0.113.15" }));
    await fb.admin("order_cancel", { id });
    expect(result(await fb.admin("order_uncancel", { id }))).toBe(true);
    expect(await pair().bridge.service.services.get(String(id))).toMatchObject({ status: "active", ip: "203.0.113.15", product_id: "13" });
  });

  it("a failed order the bridge never saw can still be deleted", async () => {
    const fb = await fossbilling();
    const id = await fb.order("10.0.0.1"); // private: the bridge refuses it (422)
    const failed = await fb.admin("order_activate", { id });
    expect(error(failed)).toMatchObject({ class: "FOSSBilling\\InformationException", message: expect.stringContaining("[ip_unusable]") });
    expect(failed.order?.status).toBe("failed_setup");
    const deleted = await fb.admin("order_delete", { id });
    expect(result(deleted)).toBe(true);
    expect(deleted.order).toBeNull();
    expect(deleted.service).toBeNull();
  });

  it("the client's order page gets the licence with its install command, and nothing the customer should not see", async () => {
    const fb = await fossbilling({ settings: { url: pair().bridge.url, token: TEST_PROVISIONING_TOKEN, service_prefix: "fb-" } });
    const id = await fb.activeOrder("203.0.113.16");
    const svc = (await pair().bridge.service.services.get(`fb-${id}`))!;
    expect(svc.status).toBe("active");

    // What FOSSBilling's order page gives the template (client.order_service), then what it reads.
    expect(result(await fb.client("order_service", { id }))).toEqual({
      id: 1, order_id: id, service_identifier: `fb-${id}`, package_identifier: "12", ip: "203.0.113.16", license_key: svc.license_key,
      created_at: expect.any(String), updated_at: expect.any(String),
    });
    const info = result(await fb.client("servicelicensebridge_license", { order_id: id }));
    expect(info).toMatchObject({
      available: true,
      license_key: svc.license_key,
      status: "active",
      ip: "203.0.113.16",
      package_identifier: "12",
      ip_changes_left: null,
      can_change_ip: true,
      install_command: expect.stringContaining("203.0.113.16"),
    });
    expect(Object.keys(info).sort()).toEqual(
      ["available", "message", "license_key", "status", "ip", "type", "variant", "bundle", "package_identifier", "expires_at", "install_command", "ip_changes_left", "can_change_ip"].sort(),
    );
    // Every field the template reads is in the answer.
    const twig = readFileSync(join(MODULE, "templates/client/mod_servicelicensebridge_manage.html.twig"), "utf8");
    for (const f of new Set([...twig.matchAll(/\blb\.(\w+)/g)].map((m) => m[1]!))) expect(info, `the template reads lb.${f}`).toHaveProperty(f);
    // The admin's service tab reads the same.
    const admin = result(await fb.admin("servicelicensebridge_license", { order_id: id }));
    expect(admin).toMatchObject({ available: true, license_key: svc.license_key });
    const adminTwig = readFileSync(join(MODULE, "templates/admin/mod_servicelicensebridge_manage.html.twig"), "utf8");
    for (const f of new Set([...adminTwig.matchAll(/\blb\.(\w+)/g)].map((m) => m[1]!))) expect(admin, `the admin template reads lb.${f}`).toHaveProperty(f);
  });

  it("a customer changes the IP within max_ip_changes (3 for product 13); the fourth change is refused", async () => {
    const fb = await fossbilling();
    const id = await fb.activeOrder("203.0.113.20", LITESPEED);
    const row = async () => (await pair().bridge.service.services.get(String(id)))!;

    for (const [n, ip] of ["203.0.113.21", "203.0.113.22", "203.0.113.23"].entries()) {
      const run = await fb.client("servicelicensebridge_change_ip", { order_id: id, new_ip: ip });
      expect(result(run)).toMatchObject({ done: true, pending: false, ip, ip_changes_left: 2 - n, can_change_ip: n < 2, message: `The licence now runs on ${ip}.` });
      expect(run.service).toMatchObject({ ip });
      expect(await row()).toMatchObject({ ip, ip_changes: n + 1 });
    }

    const refused = await fb.client("servicelicensebridge_change_ip", { order_id: id, new_ip: "203.0.113.24" });
    expect(error(refused)).toMatchObject({ class: "FOSSBilling\\InformationException", message: expect.stringMatching(/^No IP changes are left for this licence/) });
    expect(await row()).toMatchObject({ ip: "203.0.113.23", ip_changes: 3 });
    expect(upstreamCalls(pair().sb, "change-ip")).toHaveLength(3);
    expect(result(await fb.client("servicelicensebridge_license", { order_id: id }))).toMatchObject({ ip_changes_left: 0, can_change_ip: false });
    expect(pair().sb.sandbox.ledger()).toHaveLength(1);
  });

  it("a change to an unusable or invalid IP is refused with a message for the customer, and changes nothing", async () => {
    const fb = await fossbilling();
    const id = await fb.activeOrder("203.0.113.25", LITESPEED);
    expect(error(await fb.client("servicelicensebridge_change_ip", { order_id: id, new_ip: "192.168.1.5" })).message).toBe("192.168.1.5 cannot be licensed (it is a private, reserved or otherwise unusable address).");
    expect(error(await fb.client("servicelicensebridge_change_ip", { order_id: id, new_ip: "not an ip" })).message).toBe("Enter a valid IPv4 or IPv6 address.");
    expect(error(await fb.client("servicelicensebridge_change_ip", { order_id: id })).message).toBe("Enter the new IP address");
    expect(await pair().bridge.service.services.get(String(id))).toMatchObject({ ip: "203.0.113.25", ip_changes: 0 });
  });

  it("a customer reaches only their own active order, and only the client calls", async () => {
    const fb = await fossbilling();
    const id = await fb.activeOrder("203.0.113.26");
    await untilIdle(pair().bridge); // the install mail fetches its command after the activation answered
    const requestsBefore = pair().sb.sandbox.requests().length;

    expect(error(await fb.client("servicelicensebridge_license", { order_id: id }, 2)).message).toBe("Order not found");
    expect(error(await fb.client("servicelicensebridge_change_ip", { order_id: id, new_ip: "203.0.113.27" }, 2)).message).toBe("Order not found");
    for (const call of ["change_package", "adopt_custom_order", "settings", "settings_save", "test_connection", "install"]) {
      expect(error(await fb.client(`servicelicensebridge_${call}`, { order_id: id, package_identifier: "14" })), call).toMatchObject({ code: 740, http: 404 });
    }
    await fb.admin("order_suspend", { id });
    expect(error(await fb.client("servicelicensebridge_change_ip", { order_id: id, new_ip: "203.0.113.27" })).message).toBe("Order is not activated");

    expect(pair().sb.sandbox.requests().filter((r) => r.op !== "suspend")).toHaveLength(requestsBefore);
    expect(await pair().bridge.service.services.get(String(id))).toMatchObject({ ip: "203.0.113.26", product_id: "12" });
  });

  it("an admin changes the package (LiteSpeed 13 -> 14) from the order's service tab", async () => {
    const fb = await fossbilling();
    const id = await fb.activeOrder("203.0.113.28", LITESPEED);
    const run = await fb.admin("servicelicensebridge_change_package", { order_id: id, package_identifier: "14" });
    expect(result(run)).toMatchObject({ done: true, package_identifier: "14" });
    expect(run.service).toMatchObject({ package_identifier: "14" });
    expect(await pair().bridge.service.services.get(String(id))).toMatchObject({ product_id: "14", status: "active" });
    // Registering product 13 sets its core (litespeed4); the change moves it to product 14's.
    expect(upstreamCalls(pair().sb, "change-core").at(-1)?.params).toMatchObject({ ip: "203.0.113.28", old_type: "litespeed4", new_type: "litespeed" });
    expect(error(await fb.admin("servicelicensebridge_change_package", { order_id: id, package_identifier: "no such/product" })).message).toMatch(/^package_identifier must be a product id of the bridge/);
  });

  it("a refused purchase (balance 0) fails the activation in FOSSBilling's error form; activating again once topped up buys it once", async () => {
    const fb = await fossbilling();
    const { sandbox } = pair().sb;
    sandbox.setBalance(0);
    const id = await fb.order("203.0.113.30");
    const failed = await fb.admin("order_activate", { id });

    expect(error(failed)).toMatchObject({
      code: 9999,
      http: 200,
      class: "FOSSBilling\\Exception",
      message: expect.stringMatching(/^LicenseBridge: activation of order #\d+ failed: .*\[insufficient_balance\]\. The reseller account needs balance: top it up, then run Activate again; nothing is bought twice\.$/),
    });
    expect(failed.order?.status).toBe("failed_setup");
    expect(failed.history.at(-1)).toMatchObject({ status: "failed_setup", notes: expect.stringContaining("insufficient_balance") });
    expect(sandbox.ledger()).toEqual([]);

    sandbox.setBalance(1000);
    const again = await fb.admin("order_activate", { id });
    expect(result(again)).toBe(true);
    expect(again.order?.status).toBe("active");
    expect(sandbox.ledger()).toHaveLength(1);
  });

  it("an order the bridge cannot serve is refused in the cart, before anything is bought", async () => {
    const fb = await fossbilling();
    const cases: [Record<string, unknown>, string][] = [
      [{ period: "1M" }, "Enter the IP address of the server the licence is for (IPv4 or IPv6)."],
      [{ period: "1M", ip: "not-an-ip" }, "Enter the IP address of the server the licence is for (IPv4 or IPv6)."],
      [{ period: "1W", ip: "203.0.113.32" }, "Licences are sold for 1, 3 or 6 months, or 1, 2 or 3 years: please choose one of those billing periods."],
    ];
    for (const [form, message] of cases) {
      expect(error(await fb.checkout(CPANEL, form))).toMatchObject({ class: "FOSSBilling\\InformationException", message });
    }
    // The cart normalises what it accepts.
    const id = result<number>(await fb.checkout(CPANEL, { period: "1M", ip: " [2001:db8::1] " }));
    expect(JSON.parse((await fb.admin("order_service", { id })).order!.config)).toMatchObject({ ip: "2001:db8::1" });
    // An order whose IP an admin broke afterwards (order/update_config) is refused at activation.
    result(await fb.admin("order_update_config", { id, config: { period: "1M", ip: "999.1.1.1" } }));
    const failed = await fb.admin("order_activate", { id });
    expect(error(failed)).toMatchObject({ class: "FOSSBilling\\InformationException", message: expect.stringMatching(/^LicenseBridge: the IP address of order #\d+ is not a valid IP address, so nothing was bought/) });
    expect(pair().sb.sandbox.requests()).toEqual([]);
    expect(await pair().bridge.service.services.get(String(id))).toBeUndefined();
  });

  it("the settings page never shows the token; a blank token keeps it; wrong values are refused by name", async () => {
    const fb = await fossbilling({ settings: { url: pair().bridge.url, token: TEST_PROVISIONING_TOKEN, timeout: "25", service_prefix: "fb-", log_calls: "1" } });
    expect(result(await fb.admin("servicelicensebridge_settings"))).toEqual({ url: pair().bridge.url, token_set: true, timeout: 25, service_prefix: "fb-", log_calls: true });
    // The form posts every field; the token's is blank unless it is being changed.
    expect(result(await fb.admin("servicelicensebridge_settings_save", { url: `${pair().bridge.url}/`, token: "", timeout: "30", service_prefix: "fb-", log_calls: "0" }))).toBe(true);
    expect(result(await fb.admin("servicelicensebridge_settings"))).toEqual({ url: pair().bridge.url, token_set: true, timeout: 30, service_prefix: "fb-", log_calls: false });
    expect(result(await fb.admin("servicelicensebridge_test_connection"))).toEqual({ ok: true, message: `The bridge at ${pair().bridge.url} answered and accepted the token.` });

    const refused = await fb.admin("servicelicensebridge_settings_save", { url: "https://bridge.example.com", token: "short", timeout: "3", service_prefix: "a b", log_calls: "maybe" });
    expect(error(refused)).toMatchObject({
      class: "FOSSBilling\\InformationException",
      message:
        "LicenseBridge settings not saved: 'Bridge URL' must be the bridge's address, e.g. http://127.0.0.1:8080; 'Token' must be the bridge's PROVISIONING_TOKEN; 'Timeout' must be whole seconds from 5 to 120 (above the bridge's PROVISION_WAIT_SECONDS); 'Service prefix' may hold up to 32 letters, digits and . _ : -; 'Log every call' must be on or off.",
    });
    expect(result(await fb.admin("servicelicensebridge_settings"))).toMatchObject({ url: pair().bridge.url, timeout: 30 });
    // Stored in FOSSBilling's encrypted extension configuration, not in clear.
    expect(readFileSync(join(fb.root, "state.json"), "utf8")).not.toContain(TEST_PROVISIONING_TOKEN);
    expect(fb.everything()).not.toContain(TEST_PROVISIONING_TOKEN);
  });

  it("the token never appears in what the module returns, throws or logs", async () => {
    const fb = await fossbilling({ settings: { url: pair().bridge.url, token: TEST_PROVISIONING_TOKEN, log_calls: "1" } });
    const id = await fb.activeOrder("203.0.113.60", LITESPEED);
    await fb.client("servicelicensebridge_license", { order_id: id });
    await fb.client("servicelicensebridge_change_ip", { order_id: id, new_ip: "10.1.2.3" });
    await fb.admin("order_suspend", { id });
    await fb.admin("order_renew", { id });
    const failed = await fb.admin("order_activate", { id: await fb.order("203.0.113.60", LITESPEED) }); // IP held by the first order
    expect(error(failed).message).toContain("[ip_in_use]");
    // The calls were logged (log_calls), so the check below looked at real log lines.
    expect(fb.logs()).toMatch(/LicenseBridge: order #1 create .*-> HTTP 200/);
    expect(fb.everything()).not.toContain(TEST_PROVISIONING_TOKEN);

    // A wrong token: the message says where to fix it, and shows neither token.
    const wrongToken = "wrong-token-that-must-not-leak-0123";
    const wrong = await fossbilling({ settings: { url: pair().bridge.url, token: wrongToken, log_calls: "1" } });
    const run = await wrong.admin("order_activate", { id: await wrong.order("203.0.113.61") });
    expect(error(run).message).toMatch(/\[unauthorized\]\. The bridge refused the token: .* \(FOSSBilling: Extensions -> LicenseBridge licences -> Settings\.\)$/);
    expect(result(await wrong.admin("servicelicensebridge_test_connection"))).toMatchObject({ ok: false, message: expect.stringContaining("[unauthorized]") });
    expect(wrong.everything()).not.toContain(wrongToken);

    // An unreachable bridge. The licence renders in a page: there a failure is a message, not an exception.
    const unreachable = await fossbilling({ settings: { url: "http://127.0.0.1:9", token: TEST_PROVISIONING_TOKEN } });
    const uid = await unreachable.order("203.0.113.63");
    expect(error(await unreachable.admin("order_activate", { id: uid })).message).toMatch(/could not be reached.*\[unreachable\]/);
    expect(result(await unreachable.admin("servicelicensebridge_license", { order_id: uid }))).toEqual({
      available: false,
      message: "The licence details are not available right now. Please try again later.",
    });
    expect(unreachable.everything()).not.toContain(TEST_PROVISIONING_TOKEN);
  });

  it("an order of the old plug-in moves over to the module with its licence, and nothing is bought", async () => {
    const fb = await fossbilling();
    const legacy = await fb.run(["seed-legacy-order", JSON.stringify({ ip: "203.0.113.70" })]);
    const id = legacy.result as number;
    expect(legacy.order).toMatchObject({ service_type: "custom" });
    // The plug-in bought it as service_identifier = the order id.
    expect((await pair().bridge.provision("create", { service_identifier: String(id), package_identifier: "13", ip: "203.0.113.70", customer_email: "ann@example.com" })).status).toBe(200);

    const moved = await fb.admin("servicelicensebridge_adopt_custom_order", { order_id: id });
    expect(result(moved)).toMatchObject({ order_id: id, service_identifier: String(id), package_identifier: "13", ip: "203.0.113.70" });
    expect(moved.order).toMatchObject({ service_type: "licensebridge", service_id: String(result(moved).id) });
    // From now on FOSSBilling's order flows reach the module.
    expect(result(await fb.admin("order_suspend", { id }))).toBe(true);
    expect(await pair().bridge.service.services.get(String(id))).toMatchObject({ status: "suspended" });
    expect(pair().sb.sandbox.ledger()).toHaveLength(1);
    // Not twice, and not an order the bridge does not have.
    expect(error(await fb.admin("servicelicensebridge_adopt_custom_order", { order_id: id })).message).toBe(`Order #${id} is not an order of a Custom product (its type is licensebridge).`);
    const other = (await fb.run(["seed-legacy-order", JSON.stringify({ ip: "203.0.113.71" })])).result as number;
    expect(error(await fb.admin("servicelicensebridge_adopt_custom_order", { order_id: other })).message).toMatch(new RegExp(`^The bridge has no licence for order #${other} as '${other}'`));
  });
});

describe.skipIf(skip !== null)(`FOSSBilling module with a bridge that answers 202 (PROVISION_WAIT_SECONDS=1)${skip ? ` [skipped: ${skip}]` : ""}`, () => {
  const { pair, fossbilling } = useFossbilling({ PROVISION_WAIT_SECONDS: "1" });

  it("a pending activation fails the order with a note that the work goes on and a repeat is safe; activating again later activates it, bought once", async () => {
    const fb = await fossbilling();
    pair().sb.sandbox.setFaults({ holdMs: 3_000, holdNext: 1 });
    const id = await fb.order("203.0.113.80");
    const pending = await fb.admin("order_activate", { id });

    expect(error(pending)).toMatchObject({
      class: "FOSSBilling\\Exception",
      message: expect.stringMatching(/^LicenseBridge: order #\d+: the bridge is still working on this activation .*Nothing is lost: the work goes on by itself\. .*running it again is safe and never buys anything twice\.$/),
    });
    expect(pending.order?.status).toBe("failed_setup");
    expect(pending.history.at(-1)?.notes).toMatch(/still working on this activation/);

    await waitStatus(pair().bridge, String(id), "active");
    const again = await fb.admin("order_activate", { id });
    expect(result(again)).toBe(true);
    expect(again.order?.status).toBe("active");
    expect(pair().sb.sandbox.ledger()).toHaveLength(1);
  });

  it("a pending IP change is answered as pending, for the customer, and completes", async () => {
    const fb = await fossbilling();
    const id = await fb.activeOrder("203.0.113.81", LITESPEED);
    pair().sb.sandbox.setFaults({ holdMs: 3_000, holdNext: 1 });
    const changed = result(await fb.client("servicelicensebridge_change_ip", { order_id: id, new_ip: "203.0.113.82" }));
    expect(changed).toMatchObject({ done: false, pending: true, message: expect.stringContaining("is being applied") });
    await expect.poll(async () => (await pair().bridge.service.services.get(String(id)))?.ip, { timeout: 10_000 }).toBe("203.0.113.82");
  });
});
