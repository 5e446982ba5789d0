/**
 * The FOSSBilling plug-in (integrations/fossbilling/library/Plugin/LicenseBridge/, PHP) run for
 * real by php-cli against a running bridge and reseller sandbox, through a stand-in FOSSBilling
 * (integrations/fossbilling/tests/): a fake FOSSBilling root whose order and Servicecustom modules
 * load the plug-in with FOSSBilling's relative require_once, build $data / $order_data / $params as
 * FOSSBilling does, and answer as its API does (result, or error message and code).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TEST_PROVISIONING_TOKEN } from "../helpers/bridge.js";
import { settle, upstreamCalls, usePair, waitStatus, type Pair } from "../helpers/e2e-harness.js";
import { INTEGRATIONS, phpUnavailable, runPhp } from "../helpers/php.js";

const STANDIN = join(INTEGRATIONS, "fossbilling/tests/standin.php");
const TEMPLATE = join(INTEGRATIONS, "fossbilling/themes/huraga/html/mod_servicecustom_manage.html.twig");
const skip = phpUnavailable();

/** FOSSBilling product ids of the stand-in and the bridge products config.php maps them to. */
const CPANEL = 5; // -> 12 (no IP change limit)
const LITESPEED = 6; // -> 13 (max_ip_changes 3)
const UNMAPPED = 9;

interface ApiAnswer {
  http: number;
  body: { result: unknown; error: { message: string; code: number } | null };
  class?: string;
}

interface Order {
  id: number;
  status: string;
  expires_at: string | null;
  service_id: number | null;
}

interface Run {
  api: ApiAnswer | null;
  uncaught: { class: string; message: string } | null;
  result: unknown;
  order: Order | null;
  history: { status: string; notes: string }[];
  calls: { method: string; params: Record<string, unknown> }[];
}

interface InstallOptions {
  include_path?: "php_ini" | "symlink" | "none";
  settings?: Record<string, unknown>;
  config_php?: string | null;
  token?: string;
  url?: string;
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

  async install(options: InstallOptions = {}): Promise<this> {
    const { token, url, ...rest } = options;
    await this.php(["install", JSON.stringify(rest)], { LB_URL: url ?? this.pair.bridge.url, LB_TOKEN: token ?? TEST_PROVISIONING_TOKEN });
    return this;
  }

  private async php(args: string[], env: Record<string, string> = {}): Promise<string> {
    const run = await runPhp(STANDIN, args, { LB_FB_ROOT: this.root, ...env });
    this.outputs.push(run.stdout, run.stderr);
    if (this.stderrAllowed && this.stderrAllowed.test(run.stderr)) return run.stdout;
    expect(run.stderr, `php ${args[0]} wrote to stderr`).toBe("");
    expect(run.code, run.stdout).toBe(0);
    return run.stdout;
  }

  private async run(args: string[]): Promise<Run> {
    return JSON.parse(await this.php(args)) as Run;
  }

  /** A customer's checkout: a pending_setup order whose form held these fields. */
  async checkout(form: Record<string, unknown>, productId = CPANEL, period = "1M", clientId = 1): Promise<number> {
    const run = await this.run(["checkout", JSON.stringify({ client_id: clientId, product_id: productId, period, form })]);
    return run.result as number;
  }

  admin(call: string, data: Record<string, unknown>): Promise<Run> {
    return this.run(["admin", call, JSON.stringify(data)]);
  }

  client(data: Record<string, unknown>, clientId = 1): Promise<Run> {
    return this.run(["client", String(clientId), "servicecustom_call", JSON.stringify(data)]);
  }

  invoicePaid(orderId: number, task: "activate" | "renew"): Promise<Run> {
    return this.run(["invoice", String(orderId), task]);
  }

  /** An order activated through the admin API (asserted). */
  async activeOrder(ip: string, productId = CPANEL): Promise<number> {
    const id = await this.checkout({ ip }, productId);
    const run = await this.admin("order_activate", { id });
    expect(run.api?.body.error, JSON.stringify(run.history)).toBeNull();
    expect(run.order?.status).toBe("active");
    return id;
  }

  /** Every file under data/log (FOSSBilling's php_error.log). */
  logs(): string {
    const dir = join(this.root, "data/log");
    const all: string[] = [];
    const walk = (d: string) => {
      for (const name of readdirSync(d)) {
        const p = join(d, name);
        if (statSync(p).isDirectory()) walk(p);
        else all.push(readFileSync(p, "utf8"));
      }
    };
    walk(dir);
    return all.join("\n");
  }

  /** Everything the plug-in could have put the token in: outputs, logs, the "database". */
  everything(): string {
    return [...this.outputs, this.logs(), readFileSync(join(this.root, "state.json"), "utf8")].join("\n");
  }

  cleanup(): void {
    rmSync(join(this.root, ".."), { recursive: true, force: true });
  }
}

const result = <T = Record<string, unknown>>(run: Run): T => {
  expect(run.api?.body.error ?? null, JSON.stringify(run.api)).toBeNull();
  return run.api!.body.result as T;
};
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
    fossbilling: (options: InstallOptions = {}) => {
      const fb = new FakeFossbilling(pair());
      made.push(fb);
      return fb.install(options);
    },
  };
}

describe.skipIf(skip !== null)(`FOSSBilling plug-in against a running bridge${skip ? ` [skipped: ${skip}]` : ""}`, () => {
  const { pair, fossbilling } = useFossbilling();

  it("activating an order buys the licence for the form's IP and the mapped product, once", async () => {
    const fb = await fossbilling();
    const id = await fb.checkout({ ip: "203.0.113.10" });
    const run = await fb.admin("order_activate", { id });

    expect(result(run)).toBe(true);
    expect(run.order).toMatchObject({ status: "active" });
    expect(run.calls).toEqual([{ method: "activate", params: [] }]);
    const svc = (await pair().bridge.service.services.get(String(id)))!;
    expect(svc).toMatchObject({ status: "active", ip: "203.0.113.10", product_id: "12", billing_cycle: "monthly", customer_email: "ann@example.com", customer_name: "Ann Example" });
    // The bridge is paid until the expiry FOSSBilling set on activation.
    expect(Math.abs(svc.paid_until! - ms(run.order!.expires_at))).toBeLessThan(5_000);
    expect(pair().sb.sandbox.ledger()).toMatchObject([{ op: "register", ip: "203.0.113.10", type: "cpanel" }]);

    // Activating an active order again changes nothing (FOSSBilling does not even call the plug-in).
    await fb.admin("order_activate", { id });
    expect(pair().sb.sandbox.ledger()).toHaveLength(1);
  });

  it("a paid invoice activates the order the same way", async () => {
    const fb = await fossbilling();
    const id = await fb.checkout({ ip: "203.0.113.11" }, LITESPEED);
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

    const before = (await fb.admin("order_activate", { id })).order!.expires_at;
    const renewed = await fb.admin("order_renew", { id });
    expect(result(renewed)).toBe(true);
    expect(ms(renewed.order!.expires_at)).toBeGreaterThan(ms(before));
    // The bridge records the payment up to the expiry FOSSBilling moved the order to.
    expect(Math.abs((await row()).paid_until! - ms(renewed.order!.expires_at))).toBeLessThan(5_000);

    await fb.admin("order_suspend", { id });
    const paid = await fb.invoicePaid(id, "renew");
    expect(paid.calls.map((c) => c.method)).toEqual(["unsuspend", "renew"]);
    expect(paid.order?.status).toBe("active");
    expect((await row()).status).toBe("active");
    expect(Math.abs((await row()).paid_until! - ms(paid.order!.expires_at))).toBeLessThan(5_000);

    // An admin's "Renew" of a suspended order makes it active without an unsuspend call: the
    // plug-in's renew unsuspends the licence itself.
    await fb.admin("order_suspend", { id });
    const adminRenewed = await fb.admin("order_renew", { id });
    expect(adminRenewed.calls.map((c) => c.method)).toEqual(["renew"]);
    expect(adminRenewed.order?.status).toBe("active");
    expect((await row()).status).toBe("active");
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
    expect(pair().sb.sandbox.ledger()).toHaveLength(1);

    const deleted = await fb.admin("order_delete", { id });
    expect(result(deleted)).toBe(true);
    expect(deleted.order).toBeNull();
    expect((await row()).status).toBe("terminated");
  });

  it("uncancel orders the licence again on the IP the customer moved it to, not the order form's", async () => {
    const fb = await fossbilling();
    const id = await fb.activeOrder("203.0.113.14", LITESPEED);
    result(await fb.client({ order_id: id, method: "changeIp", new_ip: "203.0.113.15" }));
    await fb.admin("order_cancel", { id });
    const run = await fb.admin("order_uncancel", { id });
    expect(result(run)).toBe(true);
    expect(await pair().bridge.service.services.get(String(id))).toMatchObject({ status: "active", ip: "203.0.113.15", product_id: "13" });
  });

  it("a failed order the bridge never saw can still be deleted", async () => {
    const fb = await fossbilling();
    const id = await fb.checkout({ ip: "10.0.0.1" }); // private: the bridge refuses it (422)
    const failed = await fb.admin("order_activate", { id });
    expect(error(failed).message).toMatch(/ip_unusable/);
    expect(failed.order?.status).toBe("failed_setup");
    const deleted = await fb.admin("order_delete", { id });
    expect(result(deleted)).toBe(true);
    expect(deleted.order).toBeNull();
  });

  it("the client area gets the licence with its install command, and nothing the customer should not see", async () => {
    const fb = await fossbilling({ settings: { service_prefix: "fb-" } });
    const id = await fb.activeOrder("203.0.113.16");
    const svc = (await pair().bridge.service.services.get(`fb-${id}`))!;
    expect(svc.status).toBe("active");

    const info = result(await fb.client({ order_id: id, method: "licenseInfo" }));
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

    // The admin may read it too (admin/servicecustom/licenseInfo).
    expect(result(await fb.admin("servicecustom_licenseInfo", { order_id: id }))).toMatchObject({ available: true, license_key: svc.license_key });
  });

  it("the client template calls only allowed methods and reads only fields licenseInfo returns", async () => {
    const twig = readFileSync(TEMPLATE, "utf8");
    const methods = [...twig.matchAll(/'method':\s*'(\w+)'|name="method" value="(\w+)"/g)].map((m) => m[1] ?? m[2]);
    expect(methods.sort()).toEqual(["changeIp", "licenseInfo"]);
    const fields = new Set([...twig.matchAll(/\blb\.(\w+)/g)].map((m) => m[1]!));
    const formFields = [...twig.matchAll(/name="(\w+)"/g)].map((m) => m[1]).sort();
    expect(formFields).toEqual(["method", "new_ip", "order_id"]);

    const fb = await fossbilling();
    const id = await fb.activeOrder("203.0.113.17", LITESPEED);
    const info = result(await fb.client({ order_id: id, method: "licenseInfo" }));
    for (const f of fields) expect(info, `the template reads lb.${f}`).toHaveProperty(f);
    const changed = result(await fb.client({ order_id: id, method: "changeIp", new_ip: "203.0.113.18" }));
    expect(changed).toMatchObject({ done: true, message: expect.stringContaining("203.0.113.18") });
  });

  it("a customer changes the IP within max_ip_changes (3 for product 13); the fourth change is refused", async () => {
    const fb = await fossbilling();
    const id = await fb.activeOrder("203.0.113.20", LITESPEED);
    const row = async () => (await pair().bridge.service.services.get(String(id)))!;

    for (const [n, ip] of ["203.0.113.21", "203.0.113.22", "203.0.113.23"].entries()) {
      const changed = result(await fb.client({ order_id: id, method: "changeIp", new_ip: ip }));
      expect(changed).toMatchObject({ done: true, pending: false, ip, ip_changes_left: 2 - n, can_change_ip: n < 2 });
      expect(await row()).toMatchObject({ ip, ip_changes: n + 1 });
    }

    const refused = await fb.client({ order_id: id, method: "changeIp", new_ip: "203.0.113.24" });
    expect(error(refused)).toMatchObject({ class: "FOSSBilling\\InformationException", message: expect.stringMatching(/^No IP changes are left for this licence/) });
    expect(await row()).toMatchObject({ ip: "203.0.113.23", ip_changes: 3 });
    expect(upstreamCalls(pair().sb, "change-ip")).toHaveLength(3);
    expect(result(await fb.client({ order_id: id, method: "licenseInfo" }))).toMatchObject({ ip_changes_left: 0, can_change_ip: false });
    expect(pair().sb.sandbox.ledger()).toHaveLength(1);
  });

  it("a change to an unusable IP is refused with a message for the customer, and changes nothing", async () => {
    const fb = await fossbilling();
    const id = await fb.activeOrder("203.0.113.25", LITESPEED);
    expect(error(await fb.client({ order_id: id, method: "changeIp", new_ip: "192.168.1.5" })).message).toMatch(/cannot be licensed/);
    expect(error(await fb.client({ order_id: id, method: "changeIp", new_ip: "not an ip" })).message).toBe("Enter a valid IPv4 or IPv6 address.");
    expect(await pair().bridge.service.services.get(String(id))).toMatchObject({ ip: "203.0.113.25", ip_changes: 0 });
  });

  it("an admin changes the package (LiteSpeed 13 -> 14) through admin/servicecustom/changePackage", async () => {
    const fb = await fossbilling();
    const id = await fb.activeOrder("203.0.113.26", LITESPEED);
    const changed = result(await fb.admin("servicecustom_changePackage", { order_id: id, package_identifier: "14" }));
    expect(changed).toMatchObject({ done: true, package_identifier: "14" });
    expect(await pair().bridge.service.services.get(String(id))).toMatchObject({ product_id: "14", status: "active" });
    // Registering product 13 sets its core (litespeed4); the change moves it to product 14's.
    expect(upstreamCalls(pair().sb, "change-core").at(-1)?.params).toMatchObject({ ip: "203.0.113.26", old_type: "litespeed4", new_type: "litespeed" });
  });

  it("a refused purchase (balance 0) fails the activation in FOSSBilling's error form; activating again once topped up buys it once", async () => {
    const fb = await fossbilling();
    const { sandbox } = pair().sb;
    sandbox.setBalance(0);
    const id = await fb.checkout({ ip: "203.0.113.30" });
    const failed = await fb.admin("order_activate", { id });

    expect(error(failed)).toMatchObject({ code: 9999, http: 200, class: "FOSSBilling\\Exception", message: expect.stringContaining("insufficient_balance") });
    expect(failed.order?.status).toBe("failed_setup");
    expect(failed.history.at(-1)).toMatchObject({ status: "failed_setup", notes: expect.stringContaining("insufficient_balance") });
    expect(sandbox.ledger()).toEqual([]);

    sandbox.setBalance(1000);
    const again = await fb.admin("order_activate", { id });
    expect(result(again)).toBe(true);
    expect(again.order?.status).toBe("active");
    expect(sandbox.ledger()).toHaveLength(1);
  });

  it("an order the bridge cannot serve is refused before anything is bought", async () => {
    const fb = await fossbilling();
    const cases: [Record<string, unknown>, number, string, RegExp][] = [
      [{ ip: "203.0.113.31" }, UNMAPPED, "1M", /FOSSBilling product #9 has no bridge product/],
      [{}, CPANEL, "1M", /the order's 'ip' field is missing/],
      [{ ip: "not-an-ip" }, CPANEL, "1M", /the order's 'ip' field is not a valid IP address/],
      [{ ip: "203.0.113.32" }, CPANEL, "1W", /billed every 1W/],
    ];
    for (const [form, product, period, message] of cases) {
      const id = await fb.checkout(form, product, period);
      const run = await fb.admin("order_activate", { id });
      expect(error(run)).toMatchObject({ class: "FOSSBilling\\InformationException", message: expect.stringMatching(message) });
      expect(run.order?.status).toBe("failed_setup");
    }
    expect(pair().sb.sandbox.requests()).toEqual([]);
    expect(await pair().bridge.service.services.get("1")).toBeUndefined();
  });

  it("a client can reach licenseInfo and changeIp only: lifecycle names in any case, admin calls and helpers are refused", async () => {
    const fb = await fossbilling();
    const id = await fb.activeOrder("203.0.113.40");
    await settle(pair().bridge); // the install mail fetches its command after the activation answered
    const requestsBefore = pair().sb.sandbox.requests().length;
    const call = (method: string, extra: Record<string, unknown> = {}) => fb.client({ order_id: id, method, ...extra });

    // FOSSBilling's own check: the exact lifecycle names.
    expect(error(await call("suspend"))).toMatchObject({ http: 403, code: 403, message: "Custom plugin method suspend is forbidden" });
    // Its check is case-sensitive and PHP's method names are not: the plug-in refuses these itself.
    for (const method of ["Suspend", "ACTIVATE", "Renew", "Cancel", "Delete", "unSuspend", "Uncancel"]) {
      const run = await call(method);
      expect(error(run), method).toMatchObject({ http: 403, code: 403, message: `LicenseBridge: ${method.toLowerCase()} cannot be called through servicecustom.` });
      expect(run.calls.map((c) => c.method), method).toEqual([method]);
    }
    // Admin-only, magic and private names.
    for (const method of ["changePackage", "__construct", "__call", "settings", "call", "create", "guarded", "ip", "log"]) {
      expect(error(await call(method)), method).toMatchObject({ http: 403, code: 403, message: expect.stringMatching(/^LicenseBridge: .* cannot be called through servicecustom\.$/) });
    }
    // No such method: FOSSBilling's own refusal.
    expect(error(await call("nope"))).toMatchObject({ code: 3125, message: "Plugin LicenseBridge does not support action nope" });
    // Every parameter is checked.
    expect(error(await call("changeIp", { new_ip: ["203.0.113.41"] })).message).toBe("LicenseBridge: 'new_ip' must be a single value.");
    expect(error(await call("changeIp", { new_ip: "203.0.113.41", license_key: "x" })).message).toBe("LicenseBridge: changeIp does not take 'license_key'.");
    expect(error(await call("licenseInfo", { service_identifier: "2" })).message).toBe("LicenseBridge: licenseInfo does not take 'service_identifier'.");
    // Another customer's order is not found (FOSSBilling's check).
    expect(error(await fb.client({ order_id: id, method: "licenseInfo" }, 2)).message).toBe("Order not found");

    expect(pair().sb.sandbox.requests()).toHaveLength(requestsBefore);
    expect(pair().sb.sandbox.ledger()).toHaveLength(1);
    expect(await pair().bridge.service.services.get(String(id))).toMatchObject({ status: "active", ip: "203.0.113.40", product_id: "12" });
    expect((await fb.admin("order_activate", { id })).order?.status).toBe("active");
  });

  it("an admin cannot run a lifecycle action through servicecustom either", async () => {
    const fb = await fossbilling();
    const id = await fb.activeOrder("203.0.113.42");
    expect(error(await fb.admin("servicecustom_Terminate", { order_id: id })).code).toBe(3125);
    expect(error(await fb.admin("servicecustom_Delete", { order_id: id }))).toMatchObject({ http: 403, message: "LicenseBridge: delete cannot be called through servicecustom." });
    expect((await pair().bridge.service.services.get(String(id)))?.status).toBe("active");
  });

  it("the plug-in loads only as FOSSBilling loads it: without library/ on include_path the request dies and nothing is bought", async () => {
    const stock = await fossbilling({ include_path: "none" });
    stock.stderrAllowed = /^Warning: require_once\(Plugin\/LicenseBridge\/LicenseBridge\.php\): Failed to open stream/;
    const id = await stock.checkout({ ip: "203.0.113.50" });
    const run = await stock.admin("order_activate", { id });
    expect(run.api).toBeNull();
    expect(run.uncaught).toMatchObject({ class: "Error", message: expect.stringContaining("Failed opening required 'Plugin/LicenseBridge/LicenseBridge.php'") });
    expect(pair().sb.sandbox.requests()).toEqual([]);

    // The README's other fix: modules/Servicecustom/Plugin -> ../../library/Plugin.
    const linked = await fossbilling({ include_path: "symlink" });
    const id2 = await linked.checkout({ ip: "203.0.113.51" });
    expect(result(await linked.admin("order_activate", { id: id2 }))).toBe(true);
    expect(pair().sb.sandbox.ledger()).toHaveLength(1);
  });

  it("the token never appears in what the plug-in returns, throws or logs", async () => {
    const fb = await fossbilling({ settings: { log_calls: true } });
    const id = await fb.activeOrder("203.0.113.60", LITESPEED);
    await fb.client({ order_id: id, method: "licenseInfo" });
    await fb.client({ order_id: id, method: "changeIp", new_ip: "10.1.2.3" });
    await fb.admin("order_suspend", { id });
    await fb.admin("order_renew", { id });
    const failed = await fb.admin("order_activate", { id: await fb.checkout({ ip: "203.0.113.60" }, LITESPEED) }); // IP held by the first order
    expect(error(failed).message).toMatch(/ip_in_use/);
    // The calls were logged (log_calls), so the check below looked at real log lines.
    expect(fb.logs()).toMatch(/LicenseBridge: order #1 create .*-> HTTP 200/);
    expect(fb.everything()).not.toContain(TEST_PROVISIONING_TOKEN);

    // A wrong token: the message says where to fix it, and shows neither token.
    const wrongToken = "wrong-token-that-must-not-leak-0123";
    const wrong = await fossbilling({ token: wrongToken, settings: { log_calls: true } });
    const run = await wrong.admin("order_activate", { id: await wrong.checkout({ ip: "203.0.113.61" }) });
    expect(error(run).message).toMatch(/refused the token \(HTTP 401\)\. Check 'token' in library\/Plugin\/LicenseBridge\/config\.php/);
    expect(wrong.everything()).not.toContain(wrongToken);

    // A config.php PHP cannot parse, around the token: only the line is reported.
    const broken = await fossbilling({ config_php: `<?php\nreturn [\n  'url' => 'http://127.0.0.1:9',\n  'token' => ${wrongToken}\n];\n` });
    const bad = await broken.admin("order_activate", { id: await broken.checkout({ ip: "203.0.113.62" }) });
    expect(error(bad).message).toMatch(/config\.php has a PHP error on line \d+/);
    expect(broken.everything()).not.toContain("wrong-token");

    // An unreachable bridge. licenseInfo renders in a page: there a failure is a message, not an exception.
    const unreachable = await fossbilling({ url: "http://127.0.0.1:9" });
    const uid = await unreachable.checkout({ ip: "203.0.113.63" });
    expect(error(await unreachable.admin("order_activate", { id: uid })).message).toMatch(/could not be reached/);
    expect(result(await unreachable.admin("servicecustom_licenseInfo", { order_id: uid }))).toEqual({
      available: false,
      message: "The licence details are not available right now. Please try again later.",
    });
    expect(unreachable.everything()).not.toContain(TEST_PROVISIONING_TOKEN);
  });

  it("a missing or incomplete config.php is named in the error, and nothing is called", async () => {
    const none = await fossbilling({ config_php: null });
    const id = await none.checkout({ ip: "203.0.113.64" });
    expect(error(await none.admin("order_activate", { id })).message).toMatch(/copy config\.example\.php to config\.php/);

    const typo = await fossbilling({ settings: { tokn: "x", timeout: 2 } });
    const id2 = await typo.checkout({ ip: "203.0.113.65" });
    expect(error(await typo.admin("order_activate", { id: id2 })).message).toMatch(/unknown setting 'tokn'; 'timeout' must be whole seconds from 5 to 120/);
    expect(pair().sb.sandbox.requests()).toEqual([]);
  });
});

describe.skipIf(skip !== null)(`FOSSBilling plug-in with a bridge that answers 202 (PROVISION_WAIT_SECONDS=1)${skip ? ` [skipped: ${skip}]` : ""}`, () => {
  const { pair, fossbilling } = useFossbilling({ PROVISION_WAIT_SECONDS: "1" });

  it("a pending activation fails the order with a note; activating again later activates it, bought once", async () => {
    const fb = await fossbilling();
    pair().sb.sandbox.setFaults({ holdMs: 3_000, holdNext: 1 });
    const id = await fb.checkout({ ip: "203.0.113.70" });
    const pending = await fb.admin("order_activate", { id });

    expect(error(pending).message).toMatch(/still in progress at the bridge\. Nothing is lost and nothing is bought twice/);
    expect(pending.order?.status).toBe("failed_setup");
    expect(pending.history.at(-1)?.notes).toMatch(/still in progress/);

    await waitStatus(pair().bridge, String(id), "active");
    const again = await fb.admin("order_activate", { id });
    expect(result(again)).toBe(true);
    expect(again.order?.status).toBe("active");
    expect(pair().sb.sandbox.ledger()).toHaveLength(1);
  });

  it("a pending IP change is answered as pending, for the customer, and completes", async () => {
    const fb = await fossbilling();
    const id = await fb.activeOrder("203.0.113.71", LITESPEED);
    pair().sb.sandbox.setFaults({ holdMs: 3_000, holdNext: 1 });
    const changed = result(await fb.client({ order_id: id, method: "changeIp", new_ip: "203.0.113.72" }));
    expect(changed).toMatchObject({ done: false, pending: true, message: expect.stringContaining("is being applied") });
    await expect.poll(async () => (await pair().bridge.service.services.get(String(id)))?.ip, { timeout: 10_000 }).toBe("203.0.113.72");
  });
});
