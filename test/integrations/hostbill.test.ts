import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ERROR_HINTS } from "../../src/vocabulary/error-codes.js";
import { MODULE_VERSION } from "../../src/provisioning/module-clients.js";
import { TEST_PROVISIONING_TOKEN, uniqueIp } from "../helpers/bridge.js";
import { upstreamCalls, usePair, waitStatus, type Pair } from "../helpers/e2e-harness.js";
import { INTEGRATIONS, phpUnavailable, runPhp } from "../helpers/php.js";

/**
 * The HostBill provisioning module (integrations/hostbill/includes/modules/Hosting/license_bridge/)
 * run for real by php-cli against a running bridge and reseller sandbox. tests/run-module.php
 * loads the stand-in HostBill (tests/hostbill-stub.php: HostingModule, HostingWidget,
 * HBController, hbm_log_*), fills the module's properties as HostBill does, calls connect() and
 * then one method, and prints what HostBill would see: the return value, addError / addInfo, the
 * account fields it saves, the log lines, PHP warnings.
 */

const skip = phpUnavailable();
const RUNNER = join(INTEGRATIONS, "hostbill/tests/run-module.php");

interface LogLine {
  level: string;
  module: string;
  message: string;
}

interface HostBillRun {
  command: string;
  returned: unknown;
  threw: string | null;
  errors: string[];
  infos: string[];
  details: Record<string, string | false | null>;
  logs: LogLine[];
  warnings: string[];
  widget?: { template_exists: boolean; template_vars: string[]; template_source: string; describe: Record<string, string> };
  controller?: { assigned: Record<string, unknown>; rendered: string[]; template_exists: boolean; template_vars: string[] };
}

interface LicenceView {
  license_key: string;
  status: string;
  ip: string;
  product: string;
  expires: string;
  install_command: string;
  ip_changes_left_text: string;
}

interface ClientArea {
  licence: LicenceView | null;
  can_change_ip: boolean;
  lb_error: string | null;
  lb_info: string | null;
  lb_new_ip?: string;
}

/** What HostBill keeps for one account, as the stand-in takes it (see run-module.php). */
interface Scenario {
  server: Record<string, string>;
  account: Record<string, unknown>;
  client?: Record<string, string>;
  product?: Record<string, unknown>;
  options?: Record<string, string>;
  details?: Record<string, string | false | null>;
  account_config?: Record<string, { value: string }>;
  post?: Record<string, string>;
}

/** The App (Settings -> Apps) pointing at the bridge, in the `host` / `secure` spelling real modules read. */
function app(url: string, token = TEST_PROVISIONING_TOKEN): Record<string, string> {
  const u = new URL(url);
  return { host: u.hostname, secure: "0", field1: u.port, password: token };
}

let accountSeq = 100;

/** One HostBill account of a licence product, its IP in the product's `ip` form field. */
function account(url: string, over: { product?: string; ip?: string; cycle?: string; nextDue?: string } = {}): Scenario {
  const id = ++accountSeq;
  return {
    server: app(url),
    account: {
      id,
      client_id: 7,
      product_id: 55,
      domain: "",
      billingcycle: over.cycle ?? "Annually",
      status: "Pending",
      next_due: over.nextDue ?? "2026-01-01",
    },
    client: { id: "7", email: "ann@example.com", firstname: "Ann", lastname: "Example" },
    product: { id: 55 },
    options: { option1: over.product ?? "12", option2: "ip" },
    details: {},
    account_config: { ip: { value: over.ip ?? uniqueIp() } },
  };
}

describe.skipIf(skip !== null)(`the HostBill module against a running bridge${skip ? ` [skipped: ${skip}]` : ""}`, () => {
  const pair = usePair();
  const { run, runOk, serviceOf } = harness(pair);

  it("declares what HostBill's admin shows: its name, version, the App fields for the bridge and the product's bridge product id", async () => {
    const out = await run("describe", account("http://127.0.0.1:1"));
    const d = out.returned as Record<string, Record<string, unknown> | string>;
    expect(d).toMatchObject({ class: "license_bridge", modname: "License Bridge", version: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
    expect(d.serverFields).toMatchObject({ hostname: true, ip: true, password: true, hash: true, ssl: true, field1: true, username: false });
    expect(d.options).toMatchObject({ option1: { type: "input" }, option2: { type: "input", value: "ip" } });
  });

  it("Test Connection accepts the bridge under both spellings of the App's fields and as a full URL, and buys nothing", async () => {
    const { bridge, sb } = pair();
    const u = new URL(bridge.url);
    const spellings: Record<string, string>[] = [
      { host: u.hostname, secure: "0", field1: u.port, password: TEST_PROVISIONING_TOKEN },
      { hostname: u.hostname, ssl: "0", field1: u.port, hash: TEST_PROVISIONING_TOKEN },
      { hostname: bridge.url, password: TEST_PROVISIONING_TOKEN },
      { ip: u.hostname, ssl: "", port: u.port, password: TEST_PROVISIONING_TOKEN },
    ];
    for (const server of spellings) {
      const out = await run("testConnection", { ...account(bridge.url), server });
      expect(out.returned, JSON.stringify(server)).toBe(true);
      expect(out.errors).toEqual([]);
      expect(out.infos[0]).toContain(`Connected to license-bridge at ${bridge.url}`);
    }
    expect(sb.sandbox.requests()).toEqual([]);
  });

  it("Test Connection names a wrong token, a missing token and an unreachable bridge, as HostBill's error", async () => {
    const { bridge } = pair();
    const wrong = await run("testConnection", { ...account(bridge.url), server: app(bridge.url, "wrong-token-0123456789") }, "wrong-token-0123456789");
    expect(wrong.returned).toBe(false);
    // The bridge's own advice (generated into LicenseBridgeMessages), then where the token lives in HostBill.
    expect(wrong.errors[0]).toContain(`[unauthorized]. ${ERROR_HINTS.unauthorized} In HostBill: the Password of the License Bridge App (Settings, Apps).`);

    const missing = await run("testConnection", { ...account(bridge.url), server: { ...app(bridge.url), password: "" } });
    expect(missing.returned).toBe(false);
    expect(missing.errors[0]).toMatch(/no provisioning token/);

    const down = await run("testConnection", { ...account(bridge.url), server: { ...app(bridge.url), field1: "9" } });
    expect(down.returned).toBe(false);
    expect(down.errors[0]).toMatch(/could not be reached at http:\/\/127\.0\.0\.1:9\/.*\[unreachable\]\. .*In HostBill: the App's Hostname \(or IP\), Port \(field 1\) and Use HTTPS checkbox\.$/);
  });

  it("Create buys the licence once for the IP of the account's `ip` form field, saves its key, and a second Create buys nothing", async () => {
    const { bridge, sb } = pair();
    const acc = account(bridge.url);
    const ip = acc.account_config!.ip!.value;
    const created = await runOk("Create", acc);
    expect(created.infos[0]).toMatch(/licence lb_\S+ is active for /);

    const svc = await serviceOf(acc);
    expect(svc).toMatchObject({ status: "active", ip, product_id: "12", billing_cycle: "annually", months: 12, customer_email: "ann@example.com", customer_name: "Ann Example" });
    expect(created.details).toMatchObject({ option4: svc.license_key, option5: ip, option6: "active" });
    expect(sb.sandbox.ledger()).toMatchObject([{ op: "register", ip, type: "cpanel", months: 12 }]);

    // The module names itself in its User-Agent (license-bridge-hostbill/<version>); the bridge recorded it.
    expect((await bridge.admin(`/admin/services/${String(acc.account.id)}`)).body.module).toBe(`hostbill/${MODULE_VERSION}`);

    const again = await runOk("Create", { ...acc, details: created.details });
    expect(again.details.option4).toBe(svc.license_key);
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });

  it("Create reads the IP from the account's forms, or from its domain when that holds an IP", async () => {
    const { bridge } = pair();
    const viaForms = account(bridge.url);
    const formsIp = uniqueIp();
    delete viaForms.account_config;
    viaForms.account.forms = { ip: { value: formsIp } };
    await runOk("Create", viaForms);
    expect((await serviceOf(viaForms)).ip).toBe(formsIp);

    const viaDomain = account(bridge.url);
    const domainIp = uniqueIp();
    delete viaDomain.account_config;
    viaDomain.account.domain = domainIp;
    await runOk("Create", viaDomain);
    expect((await serviceOf(viaDomain)).ip).toBe(domainIp);
  });

  it("maps HostBill's cycle words and price letters through the shared rules, trims the IP and cleans the client's name", async () => {
    const { bridge, sb } = pair();
    const semi = account(bridge.url, { cycle: "Semi-Annually" });
    const semiIp = semi.account_config!.ip!.value;
    semi.account_config = { ip: { value: ` ${semiIp} ` } };
    semi.client = { ...semi.client!, firstname: "Ann\u0000", lastname: "Example\nLtd" };
    await runOk("Create", semi);
    expect(await serviceOf(semi)).toMatchObject({ ip: semiIp, billing_cycle: "semiannually", months: 6, customer_name: "Ann Example Ltd" });

    const quarterly = account(bridge.url, { cycle: "q" });
    await runOk("Create", quarterly);
    expect(await serviceOf(quarterly)).toMatchObject({ billing_cycle: "quarterly", months: 3 });
    expect(sb.sandbox.ledger().map((c) => c.months)).toEqual([6, 3]);
  });

  it("Create refuses without an IP, with a form value that is no IP, without a bridge product id or on an hourly cycle, and buys nothing", async () => {
    const { bridge, sb } = pair();
    const noIp = account(bridge.url);
    delete noIp.account_config;
    const cases: [Scenario, RegExp][] = [
      [noIp, /has no licence IP\. Add a form field with variable "ip"/],
      [{ ...account(bridge.url), account_config: { ip: { value: "my-server.example.com" } } }, /does not hold a valid IPv4 or IPv6 address/],
      [account(bridge.url, { product: "" }), /no "Bridge product id"/],
      [account(bridge.url, { cycle: "Hourly" }), /billing cycle "Hourly" is not one a licence can be sold on/],
    ];
    for (const [scenario, message] of cases) {
      const out = await run("Create", scenario);
      expect(out.returned).toBe(false);
      expect(out.errors).toEqual([expect.stringMatching(message)]);
      expect(await bridge.service.services.get(String(scenario.account.id))).toBeUndefined();
    }
    expect(sb.sandbox.requests()).toEqual([]);
  });

  it("a purchase the reseller refuses (no balance) is HostBill's error, false + addError, and the account stays Pending; after a top-up Create buys it once", async () => {
    const { bridge, sb } = pair();
    sb.sandbox.setBalance(0);
    const acc = account(bridge.url);
    const refused = await run("Create", acc);
    expect(refused.returned).toBe(false);
    expect(refused.errors).toHaveLength(1);
    expect(refused.errors[0]).toMatch(/^License Bridge: Create failed: .+ \[insufficient_balance\]\. /);
    expect(refused.errors[0]!.endsWith(`[insufficient_balance]. ${ERROR_HINTS.insufficient_balance!.replace("{action}", "Create")} The licence is not active yet; the account stays Pending.`)).toBe(true);
    expect(refused.infos).toEqual([]);
    expect(sb.sandbox.ledger()).toEqual([]);
    expect((await serviceOf(acc)).status).not.toBe("active");
    expect(refused.logs.some((l) => l.level === "error" && l.message.includes("insufficient_balance"))).toBe(true);

    sb.sandbox.setBalance(1000);
    const retried = await runOk("Create", { ...acc, details: refused.details });
    expect(retried.details.option6).toBe("active");
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });

  it("Suspend, Unsuspend and Terminate change the licence upstream and in the bridge, and save its status", async () => {
    const { bridge, sb } = pair();
    const acc = account(bridge.url);
    let details = (await runOk("Create", acc)).details;
    const steps: [string, string, string | undefined][] = [
      ["Suspend", "suspended", "suspend"],
      ["Unsuspend", "active", "unsuspend"],
      ["Terminate", "terminated", "suspend"],
    ];
    for (const [command, status, op] of steps) {
      const out = await runOk(command, { ...acc, details });
      details = out.details;
      expect((await serviceOf(acc)).status).toBe(status);
      expect(out.details.option6).toBe(status);
      expect(sb.sandbox.requests().at(-1)).toMatchObject({ op, status: 200 });
    }
    expect(upstreamCalls(sb, "suspend", "unsuspend").map((r) => r.op)).toEqual(["suspend", "unsuspend", "suspend"]);
  });

  it("Terminate of an account that never got a licence succeeds with a note; Suspend of it is HostBill's error", async () => {
    const { bridge, sb } = pair();
    const never = account(bridge.url);
    const terminated = await runOk("Terminate", never);
    expect(terminated.infos[0]).toMatch(/no licence was ever bought for this account/);
    const suspended = await run("Suspend", never);
    expect(suspended.returned).toBe(false);
    expect(suspended.errors[0]).toBe(`License Bridge: Suspend failed: unknown service [unknown_service]. ${ERROR_HINTS.unknown_service}`);
    expect(sb.sandbox.requests()).toEqual([]);
  });

  it("Renewal records the payment up to the account's next due date; repeating it changes nothing; no due date is HostBill's error", async () => {
    const { bridge, sb } = pair();
    const acc = account(bridge.url);
    const details = (await runOk("Create", acc)).details;
    const renewed = { ...acc, details, account: { ...acc.account, next_due: "2027-03-01" } };
    const out = await runOk("Renewal", renewed);
    expect(out.infos[0]).toMatch(/paid until 2027-03-01/);
    expect((await serviceOf(acc)).paid_until).toBe(Date.parse("2027-03-01T00:00:00Z"));
    await runOk("Renewal", renewed);
    expect((await serviceOf(acc)).paid_until).toBe(Date.parse("2027-03-01T00:00:00Z"));

    const noDue = await run("Renewal", { ...renewed, account: { ...acc.account, next_due: "0000-00-00" } });
    expect(noDue.returned).toBe(false);
    expect(noDue.errors[0]).toMatch(/no next due date/);
    expect((await serviceOf(acc)).paid_until).toBe(Date.parse("2027-03-01T00:00:00Z"));
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });

  it("ChangePackage moves a LiteSpeed licence to the new product's core; a change the bridge cannot make is HostBill's error", async () => {
    const { bridge, sb } = pair();
    const acc = account(bridge.url, { product: "13" });
    const details = (await runOk("Create", acc)).details;
    const coreChangesBefore = upstreamCalls(sb, "change-core").length;
    // HostBill loads the NEW product's module settings into $options before ChangePackage.
    const changed = await runOk("ChangePackage", { ...acc, details, options: { option1: "15" } });
    expect(changed.infos[0]).toMatch(/now product 15/);
    expect(await serviceOf(acc)).toMatchObject({ product_id: "15", variant: "litespeed8", status: "active" });
    expect(upstreamCalls(sb, "change-core").slice(coreChangesBefore)).toMatchObject([{ op: "change-core", status: 200 }]);

    const cpanel = account(bridge.url, { product: "12" });
    const cpanelDetails = (await runOk("Create", cpanel)).details;
    const refused = await run("ChangePackage", { ...cpanel, details: cpanelDetails, options: { option1: "13" } });
    expect(refused.returned).toBe(false);
    expect(refused.errors[0]).toMatch(/^License Bridge: Change Package failed: Validation error: package_identifier .+\[\w+\]\. /);
    expect((await serviceOf(cpanel)).product_id).toBe("12");
  });

  it("the client area shows the licence (status, IP, install command) in the client function and on the service page", async () => {
    const { bridge } = pair();
    const acc = account(bridge.url);
    const ip = acc.account_config!.ip!.value;

    const before = await run("widget", acc);
    expect((before.returned as [string, ClientArea])[1]).toMatchObject({ licence: null, lb_error: "Your licence has not been set up yet." });

    const details = (await runOk("Create", acc)).details;
    const widget = await run("widget", { ...acc, details });
    const [template, vars] = widget.returned as [string, ClientArea];
    expect(template).toBe("licence.tpl");
    expect(vars.lb_error).toBeNull();
    expect(vars.can_change_ip).toBe(true);
    expect(vars.licence).toMatchObject({ license_key: (await serviceOf(acc)).license_key, status: "active", ip, product: "cpanel", ip_changes_left_text: "unlimited" });
    expect(vars.licence!.install_command).toContain(ip);
    expect(widget.widget!.template_exists).toBe(true);
    expect(Object.keys(vars)).toEqual(expect.arrayContaining(widget.widget!.template_vars));
    expect(widget.widget!.template_source).toContain("{securitytoken}");
    expect(widget.widget!.template_source).toContain("{$licence.install_command|escape}");

    const page = await run("accountdetails", { ...acc, details });
    expect(page.controller!.rendered).toHaveLength(1);
    expect(page.controller!.rendered[0]).toMatch(/Hosting\/license_bridge\/user\/licence\.tpl$/);
    expect(page.controller!.template_exists).toBe(true);
    expect(page.controller!.assigned).toMatchObject({ licence: vars.licence, can_change_ip: true, lb_error: null });
    expect(Object.keys(page.controller!.assigned)).toEqual(expect.arrayContaining(page.controller!.template_vars));
  });

  it("the customer moves a LiteSpeed licence (max_ip_changes 3) three times; the fourth is refused with a clear error and reaches no reseller", async () => {
    const { bridge, sb } = pair();
    const acc = account(bridge.url, { product: "13" });
    let details = (await runOk("Create", acc)).details;

    const bad = await run("widget", { ...acc, details, post: { lb_action: "changeip", new_ip: "not-an-ip" } });
    expect((bad.returned as [string, ClientArea])[1]).toMatchObject({ lb_error: "Please enter a valid IPv4 or IPv6 address.", lb_new_ip: "not-an-ip" });
    const unusable = await run("widget", { ...acc, details, post: { lb_action: "changeip", new_ip: "127.0.0.1" } });
    expect((unusable.returned as [string, ClientArea])[1].lb_error).toMatch(/^The licence cannot be moved to 127\.0\.0\.1: \S/);
    const firstIp = acc.account_config!.ip!.value;
    const same = await run("widget", { ...acc, details, post: { lb_action: "changeip", new_ip: firstIp } });
    expect((same.returned as [string, ClientArea])[1]).toMatchObject({ lb_error: null, lb_info: `The licence now runs on ${firstIp}. IP changes left: 3.` });
    expect((await serviceOf(acc)).ip_changes).toBe(0);
    expect(upstreamCalls(sb, "change-ip")).toHaveLength(0);

    for (let n = 1; n <= 3; n++) {
      const newIp = uniqueIp();
      const out = await run("widget", { ...acc, details, post: { lb_action: "changeip", new_ip: newIp } });
      details = out.details;
      const vars = (out.returned as [string, ClientArea])[1];
      expect(vars.lb_error).toBeNull();
      expect(vars.lb_info).toBe(`The licence now runs on ${newIp}. IP changes left: ${3 - n}.`);
      expect(vars.licence).toMatchObject({ ip: newIp, ip_changes_left_text: String(3 - n) });
      expect(out.details.option5).toBe(newIp);
      expect(await serviceOf(acc)).toMatchObject({ ip: newIp, ip_changes: n });
      expect(upstreamCalls(sb, "change-ip")).toHaveLength(n);
    }

    const lastIp = (await serviceOf(acc)).ip;
    const refused = await run("widget", { ...acc, details, post: { lb_action: "changeip", new_ip: uniqueIp() } });
    const vars = (refused.returned as [string, ClientArea])[1];
    expect(vars.lb_error).toMatch(/^No IP changes are left for this licence/);
    expect(refused.errors).toEqual([expect.stringMatching(/^No IP changes are left for this licence/)]);
    expect(vars.can_change_ip).toBe(false);
    expect(vars.licence).toMatchObject({ ip: lastIp, ip_changes_left_text: "0" });
    expect((await serviceOf(acc)).ip).toBe(lastIp);
    expect(upstreamCalls(sb, "change-ip")).toHaveLength(3);
  });

  it("the token never reaches what the module returns, shows or logs, even when the bridge is down", async () => {
    const { bridge } = pair();
    const secret = "hb-secret-token-that-must-not-leak-42";
    const down = await run("Create", { ...account(bridge.url), server: { ...app(bridge.url, secret), field1: "9" } }, secret);
    expect(down.returned).toBe(false);
    expect(down.logs.length).toBeGreaterThan(0);

    const acc = account(bridge.url);
    const ok = await runOk("Create", acc);
    // The call was logged (so the check below is not vacuous), without the token.
    expect(ok.logs.some((l) => l.message.startsWith("license-bridge create {") && l.message.includes("HTTP 200"))).toBe(true);
    expect(JSON.stringify(ok)).not.toContain(TEST_PROVISIONING_TOKEN);
  });
});

describe.skipIf(skip !== null)(`the HostBill module's files outside HostBill${skip ? ` [skipped: ${skip}]` : ""}`, () => {
  it("each PHP file of the module stops at its guard when requested directly (no HostBill base class), before anything runs", async () => {
    const dir = join(INTEGRATIONS, "hostbill/includes/modules/Hosting/license_bridge");
    for (const file of ["class.license_bridge.php", "widgets/lblicence/widget.lblicence.php", "user/class.license_bridge_controller.php"]) {
      const php = await runPhp(join(dir, file));
      expect(php.stdout, file).toBe("No direct access");
      expect(php.stderr, file).toBe("");
    }
  });
});

describe.skipIf(skip !== null)(`the HostBill module when the bridge answers 202 (PROVISION_WAIT_SECONDS=1)${skip ? ` [skipped: ${skip}]` : ""}`, () => {
  const pair = usePair({ env: { PROVISION_WAIT_SECONDS: "1" } });
  const { run, runOk, serviceOf } = harness(pair);

  it("a purchase still running is HostBill's pending form (false + addError, the key saved); Create later answers true and buys once", async () => {
    const { bridge, sb } = pair();
    sb.sandbox.setFaults({ holdMs: 3_000, holdNext: 1 });
    const acc = account(bridge.url);
    const pending = await run("Create", acc);
    expect(pending.returned).toBe(false);
    expect(pending.errors).toEqual([
      expect.stringMatching(/^License Bridge: the bridge is still working on this Create \(licence lb_\S+: .+\)\. Nothing is lost: .*Run Create again in a minute.* The licence is not active yet; the account stays Pending\.$/),
    ]);
    expect(pending.details.option4).toBe((await serviceOf(acc)).license_key);

    await waitStatus(bridge, String(acc.account.id), "active", 20_000);
    const done = await runOk("Create", { ...acc, details: pending.details });
    expect(done.details.option6).toBe("active");
    expect(sb.sandbox.ledger().filter((c) => c.op === "register")).toHaveLength(1);
  }, 30_000);
});

/** Runs the stand-in; every run is checked for what must never happen (a throw, a PHP warning, the token). */
function harness(pair: () => Pair) {
  const run = async (command: string, scenario: Scenario, token = TEST_PROVISIONING_TOKEN): Promise<HostBillRun> => {
    const php = await runPhp(RUNNER, [command], { HB_SCENARIO: JSON.stringify(scenario) });
    expect(php.code, php.stderr).toBe(0);
    const out = php.json<HostBillRun>();
    expect(out.threw).toBeNull();
    expect(out.warnings).toEqual([]);
    expect(php.stdout).not.toContain(token);
    expect(php.stderr).not.toContain(token);
    return out;
  };
  /** A lifecycle method HostBill expects to succeed: true, no error. */
  const runOk = async (command: string, scenario: Scenario): Promise<HostBillRun> => {
    const out = await run(command, scenario);
    expect(out.errors, `${command}: ${out.errors.join(" | ")}`).toEqual([]);
    expect(out.returned).toBe(true);
    return out;
  };
  const serviceOf = async (scenario: Scenario) => {
    const svc = await pair().bridge.service.services.get(String(scenario.account.id));
    if (!svc) throw new Error(`the bridge has no service ${String(scenario.account.id)}`);
    return svc;
  };
  return { run, runOk, serviceOf };
}
