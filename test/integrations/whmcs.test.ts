/**
 * The WHMCS server module (integrations/whmcs/modules/servers/licensebridge/) run for real by
 * php-cli against a running bridge and reseller sandbox. integrations/whmcs/tests/call.php loads
 * it as WHMCS loads a server module (modules/servers/<name>/<name>.php, functions <name>_...) and
 * calls one module function the way WHMCS does (its documented $params, button arrays, $_POST for a
 * client's custom action, Smarty for the client area) through the stand-in whmcs-standin.php,
 * which writes every logModuleCall to a file. After every test, the token must appear in none of
 * what the module returned, rendered or logged.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ERROR_HINTS } from "../../src/vocabulary/error-codes.js";
import { MODULE_VERSION } from "../../src/provisioning/module-clients.js";
import type { ServiceRow } from "../../src/store/store.js";
import { TEST_PROVISIONING_TOKEN, TEST_SECRET } from "../helpers/bridge.js";
import { OTHER_SECRET, rowCounts, untilIdle, upstreamCalls, usePair, waitStatus, type Pair } from "../helpers/e2e-harness.js";
import { INTEGRATIONS, phpUnavailable, runPhp } from "../helpers/php.js";

const skip = phpUnavailable();
const CALL = join(INTEGRATIONS, "whmcs/tests/call.php");
/** WHMCS 8 renders module templates with Smarty 3.1; Debian's smarty3 is the same line. */
const SMARTY = process.env.LB_SMARTY ?? "/usr/share/php/smarty3/Smarty.class.php";
const noSmarty = existsSync(SMARTY) ? null : `Smarty 3 is not installed at ${SMARTY} (apt-get install smarty3)`;
// CI installs it: there a missing Smarty fails the run instead of leaving the rendering untested.
if (noSmarty && process.env.LB_REQUIRE_PHP) throw new Error(`LB_REQUIRE_PHP is set but ${noSmarty}`);
/** The server's Password, a second secret that must not leak either. */
const SERVER_PASSWORD = "server-password-never-shown-42";
const CSRF = "csrf-token-of-the-page-0123";

interface Outcome {
  function: string;
  exists: boolean;
  result: unknown;
  outcome: "success" | "error" | "page" | "not allowed" | null;
  rendered: string | null;
  properties_saved?: { name: string; value: string; stored_in: string }[];
  model_after?: Record<string, unknown>;
}

interface LogEntry {
  kind: "logModuleCall" | "logActivity";
  module: string;
  action: string;
  request: { method?: string; url?: string; params?: Record<string, string> } | string;
  response: string;
  processed: string;
  replaceVars: string[];
}

interface Call {
  kind: "functions" | "definition" | "service" | "server" | "admin-button" | "client-button" | "client-area";
  function?: string;
  params?: Record<string, unknown>;
  model?: { class: "Service" | "Addon"; attributes: Record<string, unknown>; dates?: string[] };
  request?: { method: string; get?: Record<string, string>; post?: Record<string, string> };
  page?: Record<string, unknown>;
}

/** A WHMCS service as the fixture of a call: the fields the tests vary. */
interface Svc {
  serviceid: number;
  pid: number;
  dedicatedip?: string;
  customfields?: Record<string, string>;
  billingcycle?: string;
  nextduedate?: string;
  addon?: { id: number; addonid: number };
  configoptions?: Record<string, string>;
  server?: Record<string, unknown>;
  /** Overrides of the client's details (clientsdetails). */
  client?: Record<string, string>;
}

const day = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

/**
 * WHMCS's $params for a service (developers.whmcs.com/provisioning-modules/module-parameters/,
 * plus the keys public modules read: serverhttpprefix, dedicatedip, addonId, model).
 */
function serviceCall(bridgeUrl: string, s: Svc): Pick<Call, "params" | "model"> {
  const configoptions: Record<string, string> = {};
  for (let n = 1; n <= 24; n++) configoptions[`configoption${n}`] = "";
  Object.assign(configoptions, { configoption1: "25" }, s.configoptions ?? {});
  const params: Record<string, unknown> = {
    accountid: s.addon ? s.addon.id : s.serviceid,
    serviceid: s.serviceid,
    addonId: s.addon ? s.addon.id : 0,
    userid: 3,
    domain: "",
    username: "",
    password: "",
    packageid: s.pid,
    pid: s.pid,
    serverid: 1,
    status: "Pending",
    type: "other",
    producttype: "other",
    moduletype: "licensebridge",
    ...configoptions,
    customfields: s.customfields ?? {},
    configoptions: {},
    clientsdetails: {
      userid: 3,
      id: 3,
      firstname: "Ann",
      lastname: "Example",
      fullname: "Ann Example",
      companyname: "",
      email: "ann@example.com",
      address1: "1 Example Street",
      city: "Exampleton",
      state: "",
      postcode: "EX1 1AA",
      countrycode: "GB",
      country: "GB",
      phonenumber: "+44.1234567890",
      ...s.client,
    },
    dedicatedip: s.dedicatedip ?? "",
    assignedips: "",
    ...serverParams(bridgeUrl, s.server),
  };
  const attributes: Record<string, unknown> = s.addon
    ? { id: s.addon.id, hostingid: s.serviceid, addonid: s.addon.addonid, userid: 3, billingcycle: s.billingcycle ?? "Monthly", status: "Pending" }
    : { id: s.serviceid, userid: 3, packageid: s.pid, orderid: 1, domainstatus: "Pending", billingcycle: s.billingcycle ?? "Monthly", dedicatedip: s.dedicatedip ?? "" };
  if (s.nextduedate) attributes.nextduedate = s.nextduedate;
  return { params, model: { class: s.addon ? "Addon" : "Service", attributes, dates: s.nextduedate ? ["nextduedate"] : [] } };
}

/** The server record's fields: the bridge as the module's server. */
function serverParams(bridgeUrl: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  const u = new URL(bridgeUrl);
  return {
    server: true,
    serverip: "",
    serverhostname: u.hostname,
    serverusername: "",
    serverpassword: SERVER_PASSWORD,
    serveraccesshash: TEST_PROVISIONING_TOKEN,
    serversecure: false,
    serverhttpprefix: "http",
    serverport: u.port,
    ...over,
  };
}

describe.skipIf(skip !== null)(`the WHMCS module's name and files${skip ? ` [skipped: ${skip}]` : ""}`, () => {
  const MODULE_DIR = join(INTEGRATIONS, "whmcs/modules/servers/licensebridge");

  it("is \"licensebridge\" (lowercase letters and digits, as WHMCS asks), loaded as WHMCS loads a server module; no license_bridge ships", async () => {
    expect(readdirSync(join(INTEGRATIONS, "whmcs/modules/servers"))).toEqual(["licensebridge"]);
    const meta = await runPhp(CALL, [], { LB_CALL: JSON.stringify({ kind: "definition", function: "MetaData" }) });
    expect(meta.stderr).toBe("");
    expect(meta.json()).toMatchObject({ function: "licensebridge_MetaData", exists: true, result: { DisplayName: "License Bridge" } });
    // The stand-in applies WHMCS's naming rule, so the old name cannot come back unnoticed.
    const old = await runPhp(CALL, [], { LB_MODULE_NAME: "license_bridge", LB_CALL: JSON.stringify({ kind: "definition", function: "MetaData" }) });
    expect(old.code).toBe(3);
    expect(old.stderr).toMatch(/not a WHMCS module name/);
  });

  it("each PHP file of the module stops at WHMCS's guard when requested directly", async () => {
    for (const file of ["licensebridge.php", "lib/Actions.php", "lib/Params.php"]) {
      const php = await runPhp(join(MODULE_DIR, file));
      expect(php.stdout, file).toBe("This file cannot be accessed directly");
      expect(php.stderr, file).toBe("");
    }
  });
});

describe.skipIf(skip !== null)(`the WHMCS server module against a running bridge${skip ? ` [skipped: ${skip}]` : ""}`, () => {
  const pair = usePair();
  const w = useWhmcs(pair);

  it("defines the functions of service contract section 9, with settings WHMCS can render and nothing secret in them", async () => {
    const functions = (await w.call({ kind: "functions" })).result as string[];
    for (const f of ["MetaData", "ConfigOptions", "CreateAccount", "SuspendAccount", "UnsuspendAccount", "TerminateAccount", "Renew", "ChangePackage",
      "TestConnection", "ClientArea", "ClientAreaCustomButtonArray", "ClientAreaAllowedFunctions", "AdminCustomButtonArray", "AdminServicesTabFields"]) {
      expect(functions, f).toContain(`licensebridge_${f}`.toLowerCase());
    }
    const meta = (await w.call({ kind: "definition", function: "MetaData" })).result as Record<string, unknown>;
    expect(meta).toMatchObject({ DisplayName: "License Bridge", APIVersion: "1.1", RequiresServer: true, DefaultSSLPort: "443" });

    const options = (await w.call({ kind: "definition", function: "ConfigOptions" })).result as Record<string, { Type: string }>;
    expect(Object.keys(options).length).toBeLessThanOrEqual(24);
    for (const o of Object.values(options)) expect(["text", "yesno", "dropdown", "radio", "textarea"]).toContain(o.Type);

    expect((await w.call({ kind: "definition", function: "AdminCustomButtonArray" })).result).toEqual({ "Change IP": "ChangeIp", Refresh: "Refresh" });
    expect((await w.call({ kind: "definition", function: "ClientAreaAllowedFunctions" })).result).toEqual({ "Change licence IP": "ClientChangeIp" });
  });

  it("CreateAccount buys the licence for the Dedicated IP and answers success only once it is active; Create again buys nothing", async () => {
    const { bridge, sb } = pair();
    const svc = { serviceid: 101, pid: 12, dedicatedip: "203.0.113.11" };
    const first = await w.service("CreateAccount", svc);
    expect(first.result).toBe("success");
    expect(await row(pair(), "101")).toMatchObject({ status: "active", ip: "203.0.113.11", product_id: "12", customer_email: "ann@example.com", customer_name: "Ann Example", months: 1 });
    expect(sb.sandbox.ledger()).toMatchObject([{ op: "register", ip: "203.0.113.11", type: "cpanel", months: 1 }]);

    expect((await w.service("CreateAccount", svc)).result).toBe("success");
    expect(sb.sandbox.ledger()).toHaveLength(1);
    // The module names itself in its User-Agent (license-bridge-whmcs/<version>); the bridge recorded it.
    expect((await bridge.admin("/admin/services/101")).body.module).toBe(`whmcs/${MODULE_VERSION}`);
    // Every call went to the module log, the token only in replaceVars.
    const creates = w.logged().filter((e) => e.action === "create");
    expect(creates).toHaveLength(2);
    expect(creates[0]!.request).toMatchObject({ method: "POST", url: `${bridge.url}/provision/v1/create`, params: { service_identifier: "101", package_identifier: "12" } });
    expect(creates[0]!.replaceVars).toEqual(expect.arrayContaining([TEST_PROVISIONING_TOKEN, SERVER_PASSWORD]));
  });

  it("takes the IP from the custom field \"IP Address\" when the service has no Dedicated IP, and the cycle from the model", async () => {
    const r = await w.service("CreateAccount", { serviceid: 102, pid: 12, customfields: { "IP Address": "203.0.113.12" }, billingcycle: "Annually" });
    expect(r.result).toBe("success");
    expect(await row(pair(), "102")).toMatchObject({ ip: "203.0.113.12", billing_cycle: "annually", months: 12 });
    expect(pair().sb.sandbox.ledger()).toMatchObject([{ op: "register", ip: "203.0.113.12", months: 12 }]);
  });

  it("maps WHMCS's cycle words through the shared rules (Semi-Annually is 6 months), trims the IP and cleans the client's name", async () => {
    const r = await w.service("CreateAccount", {
      serviceid: 114,
      pid: 12,
      dedicatedip: " 203.0.113.24 ",
      billingcycle: "Semi-Annually",
      client: { fullname: "Ann\u0000Example\nLtd" },
    });
    expect(r.result).toBe("success");
    expect(await row(pair(), "114")).toMatchObject({ ip: "203.0.113.24", billing_cycle: "semiannually", months: 6, customer_name: "Ann Example Ltd" });
    expect(pair().sb.sandbox.ledger()).toMatchObject([{ op: "register", ip: "203.0.113.24", months: 6 }]);
  });

  it("refuses to create without an IP, or for a One Time cycle, saying what to fill in, and calls nothing", async () => {
    const noIp = await w.service("CreateAccount", { serviceid: 103, pid: 12 });
    expect(noIp.result).toMatch(/^License Bridge: this service has no licence IP: fill in its Dedicated IP, or a custom field named "IP Address"/);
    const oneTime = await w.service("CreateAccount", { serviceid: 104, pid: 12, dedicatedip: "203.0.113.14", billingcycle: "One Time" });
    expect(oneTime.result).toMatch(/billing cycle "One Time" has no licence term/);
    const notAnIp = await w.service("CreateAccount", { serviceid: 104, pid: 12, dedicatedip: "server1.example.com" });
    expect(notAnIp.result).toBe('License Bridge: the service\'s Dedicated IP holds "server1.example.com", which is not an IPv4 or IPv6 address.');
    expect(pair().sb.sandbox.requests()).toEqual([]);
    expect(await row(pair(), "103")).toBeUndefined();
  });

  it("Suspend, Unsuspend, Renew, ChangePackage and Terminate act on the licence, and a repeat is answered success", async () => {
    const { sb } = pair();
    const svc: Svc = { serviceid: 105, pid: 13, dedicatedip: "203.0.113.15" };
    expect((await w.service("CreateAccount", svc)).result).toBe("success");
    expect(await row(pair(), "105")).toMatchObject({ status: "active", variant: "litespeed4" });

    expect((await w.service("SuspendAccount", svc)).result).toBe("success");
    expect((await row(pair(), "105")).status).toBe("suspended");
    expect((await w.service("SuspendAccount", svc)).result).toBe("success");
    // Create on a suspended licence buys nothing and is not "success": the service must not turn Active.
    expect((await w.service("CreateAccount", svc)).result).toBe(
      "License Bridge: the licence of this service exists but is suspended, so Create does not mark the service Active. Use Unsuspend for a suspended licence.",
    );
    expect(sb.sandbox.ledger()).toHaveLength(1);
    expect((await w.service("UnsuspendAccount", svc)).result).toBe("success");
    expect((await row(pair(), "105")).status).toBe("active");
    expect(upstreamCalls(sb, "suspend", "unsuspend").map((r) => r.op)).toEqual(["suspend", "unsuspend"]);

    // Renew: WHMCS has moved the next due date on; the bridge is paid up to it.
    const due = day(45);
    expect((await w.service("Renew", { ...svc, nextduedate: due })).result).toBe("success");
    expect(new Date((await row(pair(), "105")).paid_until!).toISOString().slice(0, 10)).toBe(due);

    // ChangePackage: $params['pid'] is the new product (LiteSpeed 4 cores -> 8 cores).
    expect((await w.service("ChangePackage", { ...svc, pid: 15 })).result).toBe("success");
    expect(await row(pair(), "105")).toMatchObject({ product_id: "15", variant: "litespeed8" });
    // (The order bought "litespeed" and moved it to litespeed4; the package change moves it on.)
    expect(upstreamCalls(sb, "change-core").map((r) => r.params)).toMatchObject([
      { ip: "203.0.113.15", new_type: "litespeed4" },
      { ip: "203.0.113.15", old_type: "litespeed4", new_type: "litespeed8" },
    ]);

    expect((await w.service("TerminateAccount", svc)).result).toBe("success");
    expect((await row(pair(), "105")).status).toBe("terminated");
    expect((await w.service("TerminateAccount", svc)).result).toBe("success");
    // Create on a terminated service orders it again: the reseller still has the licence, so the
    // bridge unsuspends it and buys nothing.
    expect((await w.service("CreateAccount", svc)).result).toBe("success");
    expect((await row(pair(), "105")).status).toBe("active");
    expect(sb.sandbox.ledger().map((c) => c.op)).toEqual(["register"]);
  });

  it("Renew without a future next due date sends none, and the bridge adds one billing cycle", async () => {
    const svc: Svc = { serviceid: 106, pid: 12, dedicatedip: "203.0.113.16" };
    await w.service("CreateAccount", svc);
    const before = (await row(pair(), "106")).paid_until!;
    expect((await w.service("Renew", { ...svc, nextduedate: day(-1) })).result).toBe("success");
    const renew = w.logged().find((e) => e.action === "renew")!;
    expect(renew.request).toMatchObject({ params: { service_identifier: "106" } });
    expect((renew.request as { params: Record<string, string> }).params).not.toHaveProperty("next_due_date");
    const after = new Date((await row(pair(), "106")).paid_until!);
    const expected = new Date(before);
    expected.setUTCMonth(expected.getUTCMonth() + 1);
    expect(after.toISOString().slice(0, 10)).toBe(expected.toISOString().slice(0, 10));
  });

  it("TerminateAccount of a service the bridge never licensed is success (nothing to end); Suspend of one is an error", async () => {
    const svc = { serviceid: 107, pid: 12, dedicatedip: "203.0.113.17" };
    expect((await w.service("TerminateAccount", svc)).result).toBe("success");
    expect((await w.service("SuspendAccount", svc)).result).toMatch(/unknown service \[unknown_service\]\. The bridge has no licence for this service: run Create first/);
  });

  it("a product addon is the service \"addon-<addonId>\" with the product of its Bridge product id setting", async () => {
    const addon: Svc = { serviceid: 500, pid: 12, dedicatedip: "203.0.113.18", addon: { id: 7, addonid: 4 }, billingcycle: "Annually", configoptions: { configoption3: "13" } };
    expect((await w.service("CreateAccount", addon)).result).toBe("success");
    expect(await row(pair(), "addon-7")).toMatchObject({ status: "active", product_id: "13", months: 12 });
    expect(await row(pair(), "500")).toBeUndefined();
    expect((await w.service("SuspendAccount", addon)).result).toBe("success");
    expect((await row(pair(), "addon-7")).status).toBe("suspended");

    // Settings reached by friendly name (as public modules read them for addons) work too.
    const byName = serviceCall(pair().bridge.url, { serviceid: 500, pid: 12, dedicatedip: "203.0.113.19", addon: { id: 8, addonid: 4 } });
    byName.params!["Bridge product id (product addons)"] = "12";
    expect((await w.call({ kind: "service", function: "CreateAccount", ...byName })).result).toBe("success");
    expect((await row(pair(), "addon-8")).product_id).toBe("12");

    // Without the setting the product is "addon-<addon id>", which this catalogue lacks: the bridge says so.
    const unmapped = await w.service("CreateAccount", { serviceid: 500, pid: 12, dedicatedip: "203.0.113.20", addon: { id: 9, addonid: 4 } });
    expect(unmapped.result).toMatch(/^License Bridge: Validation error: package_identifier .*\[validation\]/);
    expect(pair().sb.sandbox.ledger()).toHaveLength(2);

    // The client cannot move an addon's licence from the client area.
    const page = await w.clientArea(addon);
    expect(page.result).toMatchObject({ vars: { lb_is_addon: true, lb_can_change_ip: false } });
    rendered(page, (html) => {
      expect(html).toContain("please contact our staff");
      expect(html).not.toContain('name="lb_new_ip"');
    });
  });

  it("a refused purchase (reseller balance 0) is an error string that says what to do; Create after a top-up succeeds", async () => {
    const { sb, bridge } = pair();
    sb.sandbox.setBalance(0);
    const svc = { serviceid: 108, pid: 12, dedicatedip: "203.0.113.21" };
    const refused = await w.service("CreateAccount", svc);
    expect(refused.outcome).toBe("error");
    // The advice is the bridge's own (LicenseBridgeMessages is generated from ERROR_HINTS).
    expect(refused.result).toMatch(/^License Bridge: .*\[insufficient_balance\]\. /);
    expect(refused.result as string).toContain(`[insufficient_balance]. ${ERROR_HINTS.insufficient_balance!.replace("{action}", "Create")}`);
    expect((refused.result as string).endsWith("nothing is bought twice.")).toBe(true);
    expect(sb.sandbox.ledger()).toEqual([]);
    expect((await row(pair(), "108")).status).not.toBe("active");

    sb.sandbox.setBalance(1000);
    expect((await w.service("CreateAccount", svc)).result).toBe("success");
    await untilIdle(bridge);
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });

  it.skipIf(noSmarty !== null)(`the client area shows status, IP and the install command (escaped, with a copy button) and the change-IP form${noSmarty ? ` [skipped: ${noSmarty}]` : ""}`, async () => {
    const svc = { serviceid: 109, pid: 12, dedicatedip: "203.0.113.22" };
    const before = await w.clientArea(svc);
    expect(before.rendered).toContain("Your licence is being set up");

    await w.service("CreateAccount", svc);
    const page = await w.clientArea(svc);
    expect(page.result).toMatchObject({ templatefile: "clientarea", vars: { lb_status: "active", lb_ip: "203.0.113.22", lb_ip_changes_left: null, lb_can_change_ip: true } });
    const html = page.rendered!;
    expect(html).toContain("<td>active</td>");
    expect(html).toContain("203.0.113.22");
    // The sandbox's command is "bash <(curl ...)": shown as text, not as markup.
    expect(html).toContain("bash &lt;(curl -fsSL https://sandbox.invalid/install/cpanel.sh) --ip 203.0.113.22");
    expect(html).not.toContain("bash <(curl");
    expect(html).toContain('id="lb-copy"');
    expect(html).toContain('<td>unlimited</td>');
    expect(html).toMatch(/<form method="post" action="clientarea.php\?action=productdetails&amp;id=109">/);
    expect(html).toContain(`name="token" value="${CSRF}"`);
    expect(html).toContain('name="a" value="ClientChangeIp"');
  });

  it("the client area says only that details are unavailable when the bridge cannot be reached", async () => {
    const page = await w.clientArea({ serviceid: 110, pid: 12, dedicatedip: "203.0.113.23", server: { serverport: "9" } });
    expect(page.result).toMatchObject({ templatefile: "clientarea", vars: { lb_unavailable: true, lb_known: false } });
    expect(JSON.stringify(page.result)).not.toMatch(/127\.0\.0\.1|provision/);
    rendered(page, (html) => {
      expect(html).toContain("The licence details are not available right now");
      expect(html).not.toMatch(/127\.0\.0\.1|provision/);
    });
    // A server with no token: the same page, and nothing called.
    const noToken = await w.clientArea({ serviceid: 110, pid: 12, dedicatedip: "203.0.113.23", server: { serveraccesshash: "", serverpassword: "" } });
    expect(noToken.result).toMatchObject({ templatefile: "clientarea", vars: { lb_unavailable: true, lb_known: false } });
    rendered(noToken, (html) => expect(html).toContain("The licence details are not available right now"));
    expect(await pair().bridge.service.services.get("110")).toBeUndefined();
  });

  it("the client changes the IP by POST within the product's limit (3), WHMCS's Dedicated IP follows, and the 4th is refused", async () => {
    const { sb } = pair();
    let svc: Svc = { serviceid: 111, pid: 13, dedicatedip: "203.0.113.30" };
    await w.service("CreateAccount", svc);
    const first = await w.clientArea(svc);
    expect(first.result).toMatchObject({ vars: { lb_ip_changes_left: 3, lb_can_change_ip: true } });
    rendered(first, (html) => expect(html).toContain("This licence can be moved 3 more time(s)."));

    for (const ip of ["203.0.113.31", "203.0.113.32", "203.0.113.33"]) {
      const r = await w.clientPost("ClientChangeIp", svc, { lb_new_ip: ip });
      expect(r.result).toBe("success");
      expect(r.properties_saved).toEqual([{ name: "Dedicated IP", value: ip, stored_in: "dedicatedip" }]);
      expect(r.model_after?.dedicatedip).toBe(ip);
      svc = { ...svc, dedicatedip: ip };
    }
    expect(await row(pair(), "111")).toMatchObject({ ip: "203.0.113.33", ip_changes: 3 });
    const page = await w.clientArea(svc);
    expect(page.result).toMatchObject({ vars: { lb_ip_changes_left: 0, lb_can_change_ip: false } });
    rendered(page, (html) => {
      expect(html).not.toContain('name="lb_new_ip"');
      expect(html).toContain("can no longer be changed here");
    });

    const fourth = await w.clientPost("ClientChangeIp", svc, { lb_new_ip: "203.0.113.34" });
    expect(fourth.outcome).toBe("error");
    expect(fourth.result).toMatch(/^This licence's IP cannot be changed again/);
    expect(fourth.properties_saved).toEqual([]);
    expect(upstreamCalls(sb, "change-ip")).toHaveLength(3);
    expect((await row(pair(), "111")).ip).toBe("203.0.113.33");
  });

  it("the client's change of IP follows the custom field when the IP lives there; bad input is refused (syntax here, unusable addresses by the bridge) and nothing moves", async () => {
    const svc: Svc = { serviceid: 112, pid: 12, customfields: { "IP Address": "203.0.113.40" } };
    await w.service("CreateAccount", svc);
    const moved = await w.clientPost("ClientChangeIp", svc, { lb_new_ip: " 203.0.113.41 " });
    expect(moved.result).toBe("success");
    expect(moved.properties_saved).toEqual([{ name: "IP Address", value: "203.0.113.41", stored_in: "custom field" }]);

    for (const [bad, message] of [
      ["not-an-ip", /^Please enter a valid IPv4 or IPv6 address\.$/],
      ["10.0.0.1", /^A licence cannot be placed on 10\.0\.0\.1: it needs a public IP address\.$/],
      ["<script>", /^Please enter a valid/],
    ] as const) {
      expect((await w.clientPost("ClientChangeIp", svc, { lb_new_ip: bad })).result).toMatch(message);
    }
    expect(upstreamCalls(pair().sb, "change-ip")).toHaveLength(1);
    expect((await row(pair(), "112")).ip).toBe("203.0.113.41");

    // Opened from the menu (a GET): the page with the form, nothing changed.
    const page = await w.call({ kind: "client-button", function: "ClientChangeIp", ...serviceCall(pair().bridge.url, svc), request: { method: "GET", get: { action: "productdetails", id: "112", modop: "custom", a: "ClientChangeIp" } }, page: { token: CSRF } });
    expect(page.outcome).toBe("page");
    expect(page.result).toMatchObject({ templatefile: "clientarea", vars: { lb_can_change_ip: true } });
    rendered(page, (html) => expect(html).toContain('name="lb_new_ip"'));
    // Admin-only functions cannot be reached from the client area.
    for (const f of ["ChangeIp", "Refresh", "CreateAccount"]) {
      expect((await w.clientPost(f, svc, { lb_new_ip: "203.0.113.42" })).outcome).toBe("not allowed");
    }
  });

  it("admin: the service tab shows the licence (escaped), Refresh answers success, Change IP moves to the IP just saved", async () => {
    const { sb } = pair();
    const svc: Svc = { serviceid: 113, pid: 12, dedicatedip: "203.0.113.50" };
    const unknown = (await w.service("AdminServicesTabFields", svc)).result as Record<string, string>;
    expect(unknown["License Bridge"]).toMatch(/^No licence yet/);

    await w.service("CreateAccount", svc);
    const tab = (await w.service("AdminServicesTabFields", svc)).result as Record<string, string>;
    expect(tab).toMatchObject({ "Licence status": "active", "Licence IP": "203.0.113.50", Licence: "cpanel", "IP changes left": "unlimited", "Last error": "none" });
    expect(tab["Upstream term ends"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(tab["Paid until"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(tab["Install command"]).toContain("bash &lt;(curl");
    expect(tab["Install command"]).toContain("no call to resend the install e-mail");
    expect(tab["Licence key"]).toBe((await row(pair(), "113")).license_key);

    expect((await w.call({ kind: "admin-button", function: "Refresh", ...serviceCall(pair().bridge.url, svc) })).result).toBe("success");
    const moved = await w.call({ kind: "admin-button", function: "ChangeIp", ...serviceCall(pair().bridge.url, { ...svc, dedicatedip: "203.0.113.51" }) });
    expect(moved.result).toBe("success");
    expect((await row(pair(), "113")).ip).toBe("203.0.113.51");
    expect(upstreamCalls(sb, "change-ip")).toHaveLength(1);
    expect((await w.call({ kind: "admin-button", function: "ClientChangeIp", ...serviceCall(pair().bridge.url, svc) })).outcome).toBe("not allowed");
  });

  it("TestConnection: the right token (Access Hash, or Password) connects; a wrong one says so; an unreachable bridge says so", async () => {
    const url = pair().bridge.url;
    const test = async (over: Record<string, unknown>) => (await w.call({ kind: "server", function: "TestConnection", params: serverParams(url, over) })).result;
    expect(await test({})).toEqual({ success: true, error: "" });
    expect(await test({ serveraccesshash: "", serverpassword: TEST_PROVISIONING_TOKEN })).toEqual({ success: true, error: "" });

    const wrong = "wrong-token-that-must-not-leak-777";
    w.alsoSecret(wrong);
    const refused = (await test({ serveraccesshash: wrong })) as { success: boolean; error: string };
    expect(refused.success).toBe(false);
    expect(refused.error).toMatch(/\[unauthorized\]\. /);
    expect(refused.error.endsWith(`[unauthorized]. ${ERROR_HINTS.unauthorized} In WHMCS: System Settings > Servers > the bridge's server > Access Hash.`)).toBe(true);

    const down = (await test({ serverport: "9" })) as { success: boolean; error: string };
    expect(down).toMatchObject({ success: false, error: expect.stringMatching(/could not be reached at http:\/\/127\.0\.0\.1:9\/provision\/v1\/info.*\[unreachable\]/) });
    expect(down.error).toMatch(/In WHMCS: the server's Hostname \(or IP Address\), Port and Secure checkbox\.$/);
    expect(await test({ serveraccesshash: "", serverpassword: "" })).toEqual({ success: false, error: expect.stringMatching(/no token: put the bridge's PROVISIONING_TOKEN in its Access Hash/) });
    // Its probe is a service no panel has: the bridge holds nothing more afterwards.
    expect(await pair().bridge.service.services.get("whmcs-connection-test")).toBeUndefined();
  });
});

describe.skipIf(skip !== null)(`the WHMCS server module when the bridge answers 202 pending${skip ? ` [skipped: ${skip}]` : ""}`, () => {
  const pair = usePair({ env: { PROVISION_WAIT_SECONDS: "1" } });
  const w = useWhmcs(pair);

  it("CreateAccount is not success but a clear message that the work goes on and Create may be run again; the next Create is success", async () => {
    const { sb, bridge } = pair();
    sb.sandbox.setFaults({ holdMs: 3_000, holdNext: 1 });
    const svc = { serviceid: 201, pid: 12, dedicatedip: "203.0.113.60" };
    const pending = await w.service("CreateAccount", svc);
    expect(pending.outcome).toBe("error");
    expect(pending.result).toMatch(/^License Bridge: the bridge is still working on this Create \(still in progress.*\)\. Nothing is lost: the work goes on by itself\. Run Create again in a minute to see the outcome; running it again is safe and never buys anything twice\.$/);

    await waitStatus(bridge, "201", "active");
    expect((await w.service("CreateAccount", svc)).result).toBe("success");
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });
});

describe.skipIf(skip !== null)(`the sample WHMCS hook file against the bridge's signed webhook${skip ? ` [skipped: ${skip}]` : ""}`, () => {
  const pair = usePair();
  const HOOK = join(INTEGRATIONS, "whmcs/tests/hook.php");
  interface HookRun {
    registered: string[];
    activity: string[];
    api_calls: { command: string; values: Record<string, unknown> }[];
  }
  type Step = { api: Record<string, unknown> } | { hook: string; vars: Record<string, unknown> };
  /** A service as WHMCS's GetClientsProducts returns it (its documented fields). */
  const product = (id: number, over: Record<string, unknown> = {}) => ({
    id: String(id),
    clientid: "3",
    pid: "13",
    billingcycle: "Semi-Annually",
    dedicatedip: "203.0.113.70",
    nextduedate: "2026-01-01",
    status: "Active",
    customfields: { customfield: [] },
    ...over,
  });
  /** The module parameters an AfterModule* hook receives as `params`, for a product on WHMCS's Auto Release module. */
  const params = (serviceid: number, over: Record<string, unknown> = {}) => ({
    serviceid,
    pid: 13,
    moduletype: "autorelease",
    addonId: 0,
    clientsdetails: { email: "ann@example.com", firstname: "Ann", lastname: "Example", fullname: "Ann Example" },
    ...over,
  });
  const hook = async (steps: Step[], env: Record<string, string> = {}): Promise<HookRun> => {
    const run = await runPhp(HOOK, [], {
      LB_HOOK_URL: `${pair().bridge.url}/webhooks/billing`,
      LB_HOOK_SECRET: TEST_SECRET,
      LB_HOOK_PRODUCTS: "12, 13,15",
      LB_STEPS: JSON.stringify(steps),
      ...env,
    });
    expect(run.stderr, "PHP warnings or errors").toBe("");
    expect(run.code).toBe(0);
    for (const secret of [TEST_SECRET, OTHER_SECRET]) expect(run.stdout).not.toContain(secret.slice("whsec_".length));
    return run.json<HookRun>();
  };

  it("registers WHMCS's documented hook points; its signed events create, suspend, unsuspend, move, renew, change and terminate the licence", async () => {
    const { bridge, sb } = pair();
    let svc = product(301);
    const created = await hook([{ api: { GetClientsProducts: { "301": svc } } }, { hook: "AfterModuleCreate", vars: { params: params(301) } }]);
    expect(created.registered.sort()).toEqual(
      ["AfterModuleChangePackage", "AfterModuleCreate", "AfterModuleSuspend", "AfterModuleTerminate", "AfterModuleUnsuspend", "InvoicePaid", "PreServiceEdit", "ServiceEdit"].sort(),
    );
    expect(created.activity).toEqual([]);
    await waitStatus(bridge, "301", "active");
    expect(await row(pair(), "301")).toMatchObject({ product_id: "13", ip: "203.0.113.70", billing_cycle: "semiannually", months: 6, customer_email: "ann@example.com", customer_name: "Ann Example" });

    const api = () => ({ api: { GetClientsProducts: { "301": svc } } });
    expect((await hook([api(), { hook: "AfterModuleSuspend", vars: { params: params(301) } }])).activity).toEqual([]);
    await waitStatus(bridge, "301", "suspended");
    expect((await hook([api(), { hook: "AfterModuleUnsuspend", vars: { params: params(301) } }])).activity).toEqual([]);
    await waitStatus(bridge, "301", "active");

    // An admin saves the service with a new Dedicated IP: PreServiceEdit sees the old, ServiceEdit the new.
    const moved = product(301, { dedicatedip: "203.0.113.71" });
    expect((await hook([api(), { hook: "PreServiceEdit", vars: { serviceid: 301 } }, { api: { GetClientsProducts: { "301": moved } } }, { hook: "ServiceEdit", vars: { userid: 3, serviceid: 301 } }])).activity).toEqual([]);
    svc = moved;
    await untilIdle(bridge);
    expect((await row(pair(), "301")).ip).toBe("203.0.113.71");
    expect(upstreamCalls(sb, "change-ip")).toHaveLength(1);
    // Saved without a change of IP: nothing is sent.
    const events = (await rowCounts(bridge)).events;
    await hook([api(), { hook: "PreServiceEdit", vars: { serviceid: 301 } }, { hook: "ServiceEdit", vars: { userid: 3, serviceid: 301 } }]);
    expect((await rowCounts(bridge)).events).toBe(events);

    // A paid invoice renews each licence service on it, up to its next due date; reported twice, it is one renewal.
    const due = day(200);
    svc = product(301, { dedicatedip: "203.0.113.71", nextduedate: due });
    const invoice = { invoiceid: 77, userid: 3, status: "Paid", items: { item: [{ id: 1, type: "Hosting", relid: 301 }, { id: 2, type: "DomainRegister", relid: 9 }] } };
    const paid = () => hook([{ api: { GetClientsProducts: { "301": svc }, GetInvoice: { "77": invoice } } }, { hook: "InvoicePaid", vars: { invoiceid: 77 } }]);
    expect((await paid()).activity).toEqual([]);
    await untilIdle(bridge);
    expect(new Date((await row(pair(), "301")).paid_until!).toISOString().slice(0, 10)).toBe(due);
    const afterFirst = (await rowCounts(bridge)).events;
    expect((await paid()).activity).toEqual([]);
    expect((await rowCounts(bridge)).events).toBe(afterFirst);

    // WHMCS has moved the service to product 15 (LiteSpeed 8 cores) when AfterModuleChangePackage runs.
    svc = product(301, { dedicatedip: "203.0.113.71", nextduedate: due, pid: "15" });
    expect((await hook([api(), { hook: "AfterModuleChangePackage", vars: { params: params(301, { pid: 15 }) } }])).activity).toEqual([]);
    await untilIdle(bridge);
    expect(await row(pair(), "301")).toMatchObject({ product_id: "15", variant: "litespeed8" });

    expect((await hook([api(), { hook: "AfterModuleTerminate", vars: { params: params(301, { pid: 15 }) } }])).activity).toEqual([]);
    await waitStatus(bridge, "301", "terminated");
    expect(sb.sandbox.ledger().filter((c) => c.op === "register")).toHaveLength(1);
  });

  it("leaves alone services on the licensebridge module, product addons and products not listed; a wrong secret or no settings go to the Activity Log", async () => {
    const { bridge } = pair();
    const api = { api: { GetClientsProducts: { "302": product(302), "303": product(303, { pid: "99" }), "304": product(304, { dedicatedip: "203.0.113.74" }) } } };
    const skipped = await hook([
      api,
      { hook: "AfterModuleCreate", vars: { params: params(302, { moduletype: "licensebridge" }) } },
      { hook: "AfterModuleCreate", vars: { params: params(302, { addonId: 5 }) } },
      { hook: "AfterModuleCreate", vars: { params: params(303, { pid: 99 }) } },
    ]);
    expect(skipped.activity).toEqual([]);
    // The module's own service is skipped before WHMCS is even asked about it.
    expect(skipped.api_calls.map((c) => c.values.serviceid)).toEqual([303]);
    expect((await rowCounts(bridge)).events).toBe(0);

    const wrong = await hook([api, { hook: "AfterModuleCreate", vars: { params: params(304) } }], { LB_HOOK_SECRET: OTHER_SECRET });
    expect(wrong.activity).toEqual([expect.stringMatching(/^License Bridge webhook: service\.created for service #304 failed \(webhook-id msg_[0-9a-f]+\): HTTP 401 /)]);
    const unset = await hook([api, { hook: "AfterModuleCreate", vars: { params: params(304) } }], { LB_HOOK_URL: "" });
    expect(unset.activity).toEqual(["License Bridge webhook: service.created for service #304 not sent: set LICENSEBRIDGE_WEBHOOK_URL and LICENSEBRIDGE_WEBHOOK_SECRET (whsec_...)"]);
    expect(await bridge.service.services.get("304")).toBeUndefined();
    expect((await rowCounts(bridge)).events).toBe(0);
  });
});

/**
 * Assertions on the page as Smarty rendered it. Without Smarty 3 on this machine they are left
 * out (the vars are still checked); CI needs `apt-get install smarty3` to run them.
 */
function rendered(out: Outcome, check: (html: string) => void): void {
  if (noSmarty) return;
  expect(out.rendered).toEqual(expect.any(String));
  check(out.rendered!);
}

/** Row of the bridge's service table. */
async function row(p: Pair, id: string): Promise<ServiceRow> {
  return (await p.bridge.service.services.get(id)) as ServiceRow;
}

/**
 * Runs call.php for the tests of one describe, with a fresh module-log file per test, and checks
 * after each test that no secret is in anything the module returned, rendered or logged.
 */
function useWhmcs(pair: () => Pair) {
  let dir = "";
  let outputs: string[] = [];
  let secrets: string[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "lb-whmcs-"));
    outputs = [];
    secrets = [TEST_PROVISIONING_TOKEN, SERVER_PASSWORD];
  });
  /** What the module wrote to WHMCS's module log (the stand-in's file). */
  const moduleLog = (): LogEntry[] => {
    const file = join(dir, "module.log");
    return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as LogEntry) : [];
  };
  afterEach(() => {
    const entries = moduleLog();
    rmSync(dir, { recursive: true, force: true });
    for (const e of entries) {
      // The secrets go to WHMCS only as replaceVars, for its own masking; never in what is logged.
      const { replaceVars, ...logged } = e;
      const text = JSON.stringify(logged);
      for (const s of secrets) expect(text, `${s} in the module log`).not.toContain(s);
      expect(e.module).toBe("licensebridge");
      expect(Array.isArray(replaceVars)).toBe(true);
    }
    for (const out of outputs) for (const s of secrets) expect(out, `${s} in what the module returned or rendered`).not.toContain(s);
  });

  const w = {
    async call(c: Call): Promise<Outcome> {
      const run = await runPhp(CALL, [], { LB_CALL: JSON.stringify(c), LB_LOG_FILE: join(dir, "module.log"), LB_SMARTY: SMARTY });
      expect(run.stderr, "PHP warnings or errors").toBe("");
      expect(run.code, run.stderr).toBe(0);
      outputs.push(run.stdout);
      const out = run.json<Outcome>();
      return out;
    },
    service(fn: string, s: Svc): Promise<Outcome> {
      return w.call({ kind: "service", function: fn, ...serviceCall(pair().bridge.url, s) });
    },
    async clientArea(s: Svc): Promise<Outcome> {
      const out = await w.call({ kind: "client-area", function: "ClientArea", ...serviceCall(pair().bridge.url, s), page: { token: CSRF } });
      if (!noSmarty) expect(out.rendered).toEqual(expect.any(String));
      return out;
    },
    /** The client's form POST to clientarea.php?action=productdetails&id=<id> with modop=custom. */
    clientPost(fn: string, s: Svc, fields: Record<string, string>): Promise<Outcome> {
      const post = { token: CSRF, id: String(s.serviceid), modop: "custom", a: fn, ...fields };
      return w.call({ kind: "client-button", function: fn, ...serviceCall(pair().bridge.url, s), request: { method: "POST", get: { action: "productdetails", id: String(s.serviceid) }, post }, page: { token: CSRF } });
    },
    logged: moduleLog,
    alsoSecret(s: string) {
      secrets.push(s);
    },
  };
  return w;
}

