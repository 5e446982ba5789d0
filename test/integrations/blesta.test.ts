/**
 * The Blesta provisioning module (integrations/blesta/components/modules/license_bridge/, PHP) run
 * for real by php-cli against a running bridge and reseller sandbox. integrations/blesta/tests/
 * holds the stand-in for Blesta (its Module base class, Input, views, models over a JSON
 * database) and blesta.php, which makes one Blesta request per run: the module is called with
 * Blesta's signatures and argument shapes (use_module 'false' on an order, 'true' on activation),
 * its Input errors read as Blesta reads them, and its returned fields stored as Blesta stores them
 * (replacing every field). Without php-cli and php-curl (or with LB_SKIP_PHP=1) these tests are
 * skipped, saying why; CI sets LB_REQUIRE_PHP=1.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MODULE_VERSION } from "../../src/provisioning/module-clients.js";
import { TEST_PROVISIONING_TOKEN } from "../helpers/bridge.js";
import { upstreamCalls, usePair, waitStatus, type Pair } from "../helpers/e2e-harness.js";
import { INTEGRATIONS, phpUnavailable, runPhp } from "../helpers/php.js";

const skip = phpUnavailable();
const DRIVER = join(INTEGRATIONS, "blesta/tests/blesta.php");

type Errors = Record<string, Record<string, string>> | false | null;

interface LogLine {
  module_id: number;
  direction: "input" | "output";
  url: string;
  data: string;
  status: "success" | "error";
  group: string;
}

interface ServiceView {
  id: number;
  status: string;
  pricing_id: number;
  package_id: number;
  name: string | null;
  date_renews: string | null;
  date_canceled: string | null;
  fields: Record<string, string>;
}

interface Run {
  ok: boolean;
  result: unknown;
  errors: Errors;
  returned: unknown;
  calls: [string, unknown][];
  html: string | null;
  tab: { html: string | null; errors: Errors; messages: Record<string, { message: string[] }>; tabs: Record<string, unknown> } | null;
  fields: { name: string; type: string; value: unknown; label: string | null; tooltip: string | null }[] | null;
  service: ServiceView | null;
  row: { id: number; meta: { key: string; value: string; encrypted: number }[]; token_encrypted?: boolean; token_round_trips?: boolean } | null;
  logs: LogLine[];
}

/** Blesta packages of these tests: id => [bridge product id typed in the package (blank: the package id), pricings]. */
const PACKAGES = {
  // Blank product id: the bridge product is the Blesta package id, 12 (cPanel).
  cpanel: { id: 12, name: "cPanel", meta: { package_identifier: "" }, pricing: [{ id: 120, term: 1, period: "month" }] },
  litespeed: {
    id: 30,
    name: "LiteSpeed 4 cores",
    meta: { package_identifier: "13" },
    pricing: [
      { id: 300, term: 1, period: "month" },
      { id: 301, term: 1, period: "year" },
    ],
  },
  litespeed8: {
    id: 31,
    name: "LiteSpeed 8 cores",
    meta: { package_identifier: "15" },
    pricing: [
      { id: 310, term: 1, period: "month" },
      { id: 311, term: 3, period: "month" },
    ],
  },
  onetime: { id: 32, name: "Lifetime", meta: { package_identifier: "12" }, pricing: [{ id: 320, term: 0, period: "onetime" }] },
} as const;

const CLIENT = { id: 3, email: "ann@example.com", first_name: "Ann", last_name: "Lee" };

/**
 * A Blesta (the stand-in's database in a temp dir) wired to the test's bridge: one client, the
 * bridge as module row 1 (added through the module, so its connection test runs), the packages.
 */
function useBlesta(pair: () => Pair) {
  let dir = "";
  let db = "";
  const outputs: string[] = [];

  const run = async (action: string, args: Record<string, unknown> = {}, env: Record<string, string> = {}): Promise<Run> => {
    const res = await runPhp(DRIVER, [db, action, JSON.stringify(args)], {
      LB_URL: pair().bridge.url,
      LB_TOKEN: TEST_PROVISIONING_TOKEN,
      ...env,
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr, "PHP notices or warnings").toBe("");
    outputs.push(res.stdout);
    // Nothing the module returns, renders, logs or sets as an error carries the token.
    expect(res.stdout).not.toContain(TEST_PROVISIONING_TOKEN);
    return res.json<Run>();
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "lb-blesta-"));
    db = join(dir, "blesta.json");
    outputs.length = 0;
    await run("client.add", CLIENT);
    const row = await run("row.add");
    expect(row.errors).toBe(false);
    for (const p of Object.values(PACKAGES)) expect((await run("package.add", { ...p, module_row: row.result })).errors).toBe(false);
  });

  afterEach(() => {
    // Blesta's database holds the token only encrypted.
    if (db) expect(readFileSync(db, "utf8")).not.toContain(TEST_PROVISIONING_TOKEN);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const api = {
    run,
    /** Every stdout of this test so far. */
    outputs: () => outputs.join("\n"),
    /** A client's order: Services::add with status pending (Blesta forces use_module 'false'). */
    order: (pricing_id: number, ip: string, extra: Record<string, unknown> = {}) =>
      run("service.add", { vars: { pricing_id, client_id: CLIENT.id, license_ip: ip, status: "pending", use_module: "true", ...extra } }),
    /** The ProvisionPendingServices task once the order is paid: Services::edit with every stored field. */
    activate: (service_id: number) => run("service.activate", { service_id }),
    /**
     * An admin activates a pending service from its page: Services::edit with what the page's form
     * posts (the module's add fields as the page shows them, status active, use module ticked), and
     * none of the other stored fields.
     */
    async adminActivate(service_id: number, package_id: number, ip: string): Promise<Run> {
      const form = await run("fields", { which: "admin_add", package_id, vars: { license_ip: ip } });
      const post = Object.fromEntries(form.fields!.map((f) => [f.name, f.value]));
      return run("service.admin_edit_pending", { service_id, post: { ...post, status: "active", use_module: "true" } });
    },
    /** An order, paid and provisioned; returns the service. */
    async active(pricing_id: number, ip: string): Promise<ServiceView> {
      const ordered = await api.order(pricing_id, ip);
      expect(ordered.errors).toBe(false);
      const activated = await api.activate(ordered.result as number);
      expect(activated.errors).toBe(false);
      expect(activated.service!.status).toBe("active");
      return activated.service!;
    },
    tab: (service_id: number, post?: Record<string, string>) =>
      run("service.tab", { service_id, method: "tabClientLicence", get: [], ...(post ? { post } : {}) }),
  };
  return api;
}

const message = (errors: Errors, field: string, rule: string) => (errors ? errors[field]?.[rule] : undefined);

describe.skipIf(skip !== null)(`the Blesta module against a running bridge${skip ? ` [skipped: ${skip}]` : ""}`, () => {
  const pair = usePair();
  const blesta = useBlesta(pair);

  it("adds the bridge as a module row only after a connection test, and stores the token encrypted, never showing it", async () => {
    // beforeEach added row 1 with the right token: stored encrypted, and it decrypts to the token.
    const manage = await blesta.run("module.manage");
    expect(manage.row).toMatchObject({ token_encrypted: true, token_round_trips: true });
    expect(manage.html).toContain(`<td>${pair().bridge.url}</td>`);

    const wrong = await blesta.run("row.add", { over: { token: "not-the-token-0123456789" } });
    expect(message(wrong.errors, "token", "connection")).toMatch(/refused the token \(HTTP 401\)/);
    expect(wrong.result).toBeNull();

    const nowhere = await blesta.run("row.add", { over: { host: "127.0.0.1", port: "9" } });
    expect(message(nowhere.errors, "token", "connection")).toMatch(/could not be reached/);

    const badHost = await blesta.run("row.add", { over: { host: "https://bridge.example.com/x" } });
    expect(message(badHost.errors, "host", "valid")).toBeDefined();
    expect(badHost.logs, "no call with a bad host").toEqual([]);

    // Editing with the token field left blank keeps the stored token; the edit form never shows it.
    const edited = await blesta.run("row.edit", { row_id: manage.row!.id, vars: { name: "Renamed", scheme: "http", host: "127.0.0.1", port: new URL(pair().bridge.url).port, token: "" } });
    expect(edited.errors).toBe(false);
    expect(edited.row).toMatchObject({ token_encrypted: true, token_round_trips: true });
    const form = await blesta.run("row.manage_edit", { row_id: manage.row!.id });
    expect(form.html).toContain('name="host" value="127.0.0.1"');
    expect(form.html).toMatch(/<input type="password" name="token" id="token"[^>]*\/>/);
    // Each connection test is in the module log, without the token.
    expect(edited.logs.map((l) => [l.direction, l.url])).toEqual([
      ["input", `${pair().bridge.url}/provision/v1/info`],
      ["output", `${pair().bridge.url}/provision/v1/info`],
    ]);
  });

  it("the package holds the bridge product id (blank: the Blesta package id), and a malformed one is the package's error", async () => {
    const fields = await blesta.run("fields", { which: "package", package_id: PACKAGES.litespeed.id, vars: { meta: { package_identifier: "13" } } });
    expect(fields.fields).toEqual([
      { name: "meta[package_identifier]", type: "fieldText", value: "13", label: "Bridge Product ID", tooltip: expect.stringContaining("Leave blank to use this package's Blesta id") },
    ]);
    const bad = await blesta.run("package.add", { id: 40, name: "Bad", meta: { package_identifier: "13 cores!" } });
    expect(message(bad.errors, "meta[package_identifier]", "valid")).toMatch(/letters, digits/);
    expect(bad.result).toBeNull();
    // The order form asks for the IP only; customers change it in the Licence tab, not in an edit form.
    expect((await blesta.run("fields", { which: "client_add", package_id: PACKAGES.cpanel.id })).fields!.map((f) => f.name)).toEqual(["license_ip"]);
    expect((await blesta.run("fields", { which: "client_edit", package_id: PACKAGES.cpanel.id })).fields).toEqual([]);
  });

  it("an order is stored pending without a call (use_module 'false'); the paid activation (use_module 'true') buys the licence and keeps every field", async () => {
    const ordered = await blesta.order(PACKAGES.cpanel.pricing[0].id, "203.0.113.10");
    expect(ordered.calls).toEqual([["addService", { use_module: "false", status: "pending" }]]);
    expect(ordered.errors).toBe(false);
    expect(ordered.logs).toEqual([]);
    expect(pair().sb.sandbox.requests()).toEqual([]);
    const pending = ordered.service!;
    expect(pending).toMatchObject({ status: "pending", name: "203.0.113.10" });
    // No name is made up for the bridge at order time: activation names the service by its Blesta id.
    expect(pending.fields).toEqual({ license_ip: "203.0.113.10", license_ref: "", license_key: "", license_install_command: "" });
    const ref = String(pending.id);

    const activated = await blesta.activate(pending.id);
    expect(activated.calls).toEqual([["addService", { use_module: "true", status: "active" }]]);
    expect(activated.errors).toBe(false);
    const svc = activated.service!;
    expect(svc.status).toBe("active");
    expect(svc.fields.license_ref).toBe(ref);
    expect(svc.fields.license_key).toMatch(/^lb_/);
    expect(svc.fields.license_ip).toBe("203.0.113.10");
    expect(svc.fields.license_install_command).toContain("203.0.113.10");

    // One licence bought, for the package id (the package's product id was left blank), with the client and the renew date.
    expect(pair().sb.sandbox.ledger()).toMatchObject([{ op: "register", ip: "203.0.113.10", type: "cpanel", months: 1 }]);
    const row = (await pair().bridge.service.services.get(ref))!;
    expect(row).toMatchObject({ product_id: "12", status: "active", customer_email: CLIENT.email, customer_name: "Ann Lee", billing_cycle: "monthly", license_key: svc.fields.license_key });
    expect(row.paid_until).toBe(Date.parse(svc.date_renews!));
    // The bridge recorded which module bought it (the shared client's User-Agent, panel "blesta").
    expect((await pair().bridge.admin(`/admin/services/${ref}`)).body).toMatchObject({ service_id: ref, module: `blesta/${MODULE_VERSION}` });
    // The call is in Blesta's module log: input and output, one group, no token.
    expect(activated.logs).toMatchObject([
      { direction: "input", url: `${pair().bridge.url}/provision/v1/create`, status: "success" },
      { direction: "output", url: `${pair().bridge.url}/provision/v1/create`, status: "success" },
    ]);
    expect(activated.logs[0]!.group).toBe(activated.logs[1]!.group);
    expect(JSON.parse(activated.logs[0]!.data)).toMatchObject({ method: "POST", params: { service_identifier: ref, package_identifier: "12", ip: "203.0.113.10", billing_cycle: "monthly" } });
  });

  it("a refused purchase (balance 0) is Blesta's error: the service stays pending, and the next activation run finishes the same order", async () => {
    const ordered = await blesta.order(PACKAGES.litespeed.pricing[1].id, "203.0.113.11");
    const id = ordered.result as number;
    pair().sb.sandbox.setBalance(0);

    const refused = await blesta.activate(id);
    expect(refused.ok).toBe(false);
    expect(message(refused.errors, "api", "insufficient_balance")).toMatch(
      /^License Bridge \(Activate\): .*\[insufficient_balance\]\. The reseller account needs balance: top it up, then run Activate again; nothing is bought twice\.$/,
    );
    expect(refused.service).toMatchObject({ status: "pending", fields: ordered.service!.fields });
    expect(pair().sb.sandbox.ledger()).toEqual([]);
    expect(refused.logs.at(-1)).toMatchObject({ direction: "output", status: "error" });

    pair().sb.sandbox.setBalance(1000);
    const retried = await blesta.activate(id);
    expect(retried.errors).toBe(false);
    expect(retried.service).toMatchObject({ status: "active", fields: { license_ref: String(id) } });
    expect(pair().sb.sandbox.ledger()).toMatchObject([{ op: "register", ip: "203.0.113.11", type: "litespeed", months: 12 }]);
    expect(await pair().bridge.service.services.get(String(id))).toMatchObject({ billing_cycle: "annually", product_id: "13" });
  });

  it("an admin adding an active service buys at once; adding again after an error (same form, same hidden token) buys nothing twice; another form for the same IP is another order", async () => {
    const form = await blesta.run("fields", { which: "admin_add", package_id: PACKAGES.cpanel.id });
    const hidden = form.fields!.find((f) => f.name === "license_add_token")!;
    expect(hidden).toMatchObject({ type: "fieldHidden", value: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(form.fields!.map((f) => f.name)).toEqual(["license_ip", "license_add_token"]);
    // Blesta renders the form again with what was posted (a re-submit): the token stays.
    expect((await blesta.run("fields", { which: "admin_add", package_id: PACKAGES.cpanel.id, vars: { license_add_token: hidden.value } })).fields!.find((f) => f.name === "license_add_token")!.value).toBe(hidden.value);

    const vars = { pricing_id: PACKAGES.cpanel.pricing[0].id, client_id: CLIENT.id, status: "active", use_module: "true", license_ip: "203.0.113.12", license_add_token: hidden.value };
    pair().sb.sandbox.setBalance(0);
    const refused = await blesta.run("service.add", { vars });
    expect(refused.result).toBeNull();
    expect(message(refused.errors, "api", "insufficient_balance")).toBeDefined();
    const sentAs = JSON.parse(refused.logs[0]!.data).params.service_identifier as string;
    expect(sentAs).toMatch(/^blesta-[0-9a-f]{24}$/);

    pair().sb.sandbox.setBalance(1000);
    const added = await blesta.run("service.add", { vars });
    expect(added.errors).toBe(false);
    expect(added.service).toMatchObject({ status: "active", fields: { license_ref: sentAs, license_ip: "203.0.113.12" } });
    expect(added.service!.fields).not.toHaveProperty("license_add_token");
    expect(pair().sb.sandbox.ledger()).toHaveLength(1);

    // A new add form (a new token) for the same client, package and IP is a new order: the bridge
    // refuses it (one licence per IP) instead of handing it the first service's licence.
    const second = await blesta.run("fields", { which: "admin_add", package_id: PACKAGES.cpanel.id });
    const again = await blesta.run("service.add", { vars: { ...vars, license_add_token: second.fields!.find((f) => f.name === "license_add_token")!.value } });
    expect(again.result).toBeNull();
    expect(message(again.errors, "api", "ip_in_use")).toMatch(/\[ip_in_use\]/);
    expect(pair().sb.sandbox.ledger()).toHaveLength(1);

    // use_module 'false': Blesta only records the service; the bridge is not called.
    const manual = await blesta.run("service.add", { vars: { ...vars, use_module: "false", license_ip: "203.0.113.13", license_add_token: undefined } });
    expect(manual.errors).toBe(false);
    expect(manual.logs).toEqual([]);
    expect(manual.service!.fields.license_key).toBe("");
    // Cancelling it has nothing to terminate at the bridge and is not an error.
    expect((await blesta.run("service.cancel", { service_id: manual.service!.id })).errors).toBe(false);
  });

  it("a pending service that an earlier module version named at order time (license_ref blesta-<24 hex>) keeps that name when activated, read from Blesta's row", async () => {
    const ordered = await blesta.order(PACKAGES.cpanel.pricing[0].id, "203.0.113.16");
    const id = ordered.result as number;
    const legacy = "blesta-0123456789abcdef01234567";
    await blesta.run("service.store_fields", { service_id: id, fields: { license_ip: "203.0.113.16", license_ref: legacy, license_key: "", license_install_command: "" } });
    // The earlier activation had reached the bridge under that name (a 202, or a lost answer).
    expect((await pair().bridge.provision("create", { service_identifier: legacy, package_identifier: "12", ip: "203.0.113.16" })).status).toBe(200);

    const activated = await blesta.adminActivate(id, PACKAGES.cpanel.id, "203.0.113.16");
    expect(activated.errors).toBe(false);
    expect(activated.service).toMatchObject({ status: "active", fields: { license_ref: legacy, license_key: expect.stringMatching(/^lb_/) } });
    expect(pair().sb.sandbox.ledger()).toHaveLength(1);
    expect(await pair().bridge.service.services.get(String(id))).toBeFalsy();
  });

  it("a bad IP is refused before any call; an IP the bridge refuses, or a term it cannot sell, is Blesta's error with nothing bought", async () => {
    const bad = await blesta.order(PACKAGES.cpanel.pricing[0].id, "203.0.113.300");
    expect(message(bad.errors, "license_ip", "valid")).toMatch(/valid IPv4 or IPv6/);
    expect(bad.result).toBeNull();

    const loopback = await blesta.order(PACKAGES.cpanel.pricing[0].id, "127.0.0.1");
    const refused = await blesta.activate(loopback.result as number);
    expect(message(refused.errors, "api", "ip_unusable")).toMatch(/^License Bridge \(Activate\): Validation error: ip .*\[ip_unusable\]\. Use a public IP address for the licence\.$/);
    expect(refused.service!.status).toBe("pending");

    const lifetime = await blesta.order(PACKAGES.onetime.pricing[0].id, "203.0.113.14");
    const once = await blesta.activate(lifetime.result as number);
    expect(message(once.errors, "pricing_id", "cycle")).toMatch(/0 onetime/);
    expect(once.logs).toEqual([]);
    expect(pair().sb.sandbox.ledger()).toEqual([]);
  });

  it("an unexpected failure inside Blesta is Blesta's error, not a crash of its request", async () => {
    await blesta.run("client.add", { id: 4, email: "bo@example.com", first_name: "Bo", last_name: "Ek", broken: true });
    const ordered = await blesta.order(PACKAGES.cpanel.pricing[0].id, "203.0.113.15", { client_id: 4 });
    const failed = await blesta.activate(ordered.result as number);
    expect(message(failed.errors, "license_bridge", "internal")).toMatch(/failed unexpectedly \(RuntimeException: .*gone away\); nothing was changed/);
    expect(failed.service!.status).toBe("pending");
    expect(pair().sb.sandbox.requests()).toEqual([]);
  });

  it("suspend, unsuspend, renew, change package and cancel each reach the licence, keeping every field", async () => {
    const svc = await blesta.active(PACKAGES.litespeed.pricing[0].id, "203.0.113.20");
    const ref = svc.fields.license_ref!;
    const bridged = async () => (await pair().bridge.service.services.get(ref))!;

    const suspended = await blesta.run("service.suspend", { service_id: svc.id });
    expect(suspended.errors).toBe(false);
    expect(suspended.service).toMatchObject({ status: "suspended", fields: svc.fields });
    expect((await bridged()).status).toBe("suspended");

    const unsuspended = await blesta.run("service.unsuspend", { service_id: svc.id });
    expect(unsuspended.errors).toBe(false);
    expect(unsuspended.service!.status).toBe("active");
    expect((await bridged()).status).toBe("active");
    expect(upstreamCalls(pair().sb, "suspend", "unsuspend").map((r) => r.op)).toEqual(["suspend", "unsuspend"]);

    // The renewal invoice moves date_renews on (no module call); its payment renews the licence to that date.
    const invoiced = await blesta.run("service.invoice_renewal", { service_id: svc.id });
    expect(invoiced.calls).toEqual([]);
    const renewed = await blesta.run("service.renew", { service_id: svc.id });
    expect(renewed.errors).toBe(false);
    expect(renewed.calls).toEqual([["renewService", { date_renews: invoiced.service!.date_renews }]]);
    expect((await bridged()).paid_until).toBe(Date.parse(`${invoiced.service!.date_renews!.replace(" ", "T")}Z`));
    expect(renewed.service!.fields).toEqual(svc.fields);

    // A package change to another product moves the licence (Blesta calls changeServicePackage, then editService).
    const changed = await blesta.run("service.edit", { service_id: svc.id, vars: { pricing_id: PACKAGES.litespeed8.pricing[0].id } });
    expect(changed.errors).toBe(false);
    expect(changed.calls.map((c) => c[0])).toEqual(["changeServicePackage", "editService"]);
    expect(changed.service).toMatchObject({ package_id: PACKAGES.litespeed8.id, fields: { license_key: svc.fields.license_key, license_ref: ref, license_ip: "203.0.113.20" } });
    expect(await bridged()).toMatchObject({ product_id: "15", variant: "litespeed8" });

    // Only the term changed (same product): nothing to call.
    const term = await blesta.run("service.edit", { service_id: svc.id, vars: { pricing_id: PACKAGES.litespeed8.pricing[1].id } });
    expect(term.errors).toBe(false);
    expect(term.calls.map((c) => c[0])).toEqual(["changeServicePackage", "editService"]);
    expect(term.logs).toEqual([]);
    expect(term.service!.pricing_id).toBe(PACKAGES.litespeed8.pricing[1].id);

    // A cancellation scheduled for the end of the term calls nothing; the one that takes effect terminates.
    const scheduled = await blesta.run("service.cancel", { service_id: svc.id, vars: { date_canceled: "end_of_term" } });
    expect(scheduled.calls).toEqual([]);
    expect((await bridged()).status).toBe("active");
    const cancelled = await blesta.run("service.cancel", { service_id: svc.id });
    expect(cancelled.errors).toBe(false);
    expect(cancelled.calls).toEqual([["cancelService", []]]);
    expect(cancelled.service!.status).toBe("canceled");
    expect((await bridged()).status).toBe("terminated");
    expect(cancelled.service!.fields.license_key).toBe(svc.fields.license_key);
  });

  it("the admin's IP edit moves the licence with change-ip; the bridge's own limit refusal is Blesta's error", async () => {
    const svc = await blesta.active(PACKAGES.litespeed.pricing[0].id, "203.0.113.30");
    const edited = await blesta.run("service.edit", { service_id: svc.id, vars: { license_ip: "203.0.113.31" } });
    expect(edited.errors).toBe(false);
    expect(edited.service).toMatchObject({ name: "203.0.113.31", fields: { license_ip: "203.0.113.31", license_key: svc.fields.license_key, license_ref: svc.fields.license_ref } });
    expect(edited.service!.fields.license_install_command).toContain("203.0.113.31");
    expect(await pair().bridge.service.services.get(svc.fields.license_ref!)).toMatchObject({ ip: "203.0.113.31", ip_changes: 1 });

    // The same IP (another spelling) changes nothing.
    const same = await blesta.run("service.edit", { service_id: svc.id, vars: { license_ip: " 203.0.113.31 " } });
    expect(same.errors).toBe(false);
    expect(same.logs).toEqual([]);

    await blesta.run("service.edit", { service_id: svc.id, vars: { license_ip: "203.0.113.32" } });
    await blesta.run("service.edit", { service_id: svc.id, vars: { license_ip: "203.0.113.33" } });
    const over = await blesta.run("service.edit", { service_id: svc.id, vars: { license_ip: "203.0.113.34" } });
    expect(message(over.errors, "api", "ip_change_limit")).toMatch(/no IP changes left/);
    expect(over.service!.fields.license_ip).toBe("203.0.113.33");
    expect(upstreamCalls(pair().sb, "change-ip")).toHaveLength(3);
  });

  it("the customer's Licence tab changes the IP within the product's limit (LiteSpeed: 3) and refuses clearly at 0", async () => {
    const svc = await blesta.active(PACKAGES.litespeed.pricing[0].id, "203.0.113.40");
    const first = await blesta.tab(svc.id);
    expect(first.tab!.tabs).toHaveProperty("tabClientLicence");
    expect(first.errors).toBe(false);
    expect(first.html).toContain('class="license-bridge-ip-changes-left">3<');
    expect(first.html).toContain('name="new_ip"');
    expect(first.html).toMatch(/license-bridge-install-command">[^<]*203\.0\.113\.40/);

    for (const [n, ip] of ["203.0.113.41", "203.0.113.42", "203.0.113.43"].entries()) {
      const moved = await blesta.tab(svc.id, { new_ip: ip });
      expect(moved.errors).toBe(false);
      expect(moved.tab!.messages.success!.message).toEqual([`The licence now belongs to ${ip}.`]);
      expect(moved.calls.map((c) => c[0])).toEqual(["tabClientLicence", "editService"]);
      expect(moved.service!.fields.license_ip).toBe(ip);
      expect(moved.html).toContain(`class="license-bridge-ip-changes-left">${2 - n}<`);
      expect((await pair().bridge.service.services.get(svc.fields.license_ref!))!.ip).toBe(ip);
    }

    const none = await blesta.tab(svc.id);
    expect(none.html).toContain("license-bridge-no-changes-left");
    expect(none.html).not.toContain('name="new_ip"');
    const refused = await blesta.tab(svc.id, { new_ip: "203.0.113.44" });
    expect(message(refused.errors, "license_ip", "ip_change_limit")).toMatch(/no IP changes left .* contact support/);
    expect(refused.service!.fields.license_ip).toBe("203.0.113.43");
    expect(upstreamCalls(pair().sb, "change-ip")).toHaveLength(3);

    // Other mistakes are the customer's error too, with no call.
    const typo = await blesta.tab(svc.id, { new_ip: "not an ip" });
    expect(message(typo.errors, "license_ip", "valid")).toBeDefined();
    expect(typo.logs.filter((l) => l.url.endsWith("/change-ip"))).toEqual([]);
  });

  it("the customer's tab on an unlimited product (cPanel) allows changes, and a suspended service's IP cannot be changed", async () => {
    const svc = await blesta.active(PACKAGES.cpanel.pricing[0].id, "203.0.113.50");
    const tab = await blesta.tab(svc.id);
    expect(tab.html).toContain('class="license-bridge-ip-changes-left">Unlimited<');
    expect((await blesta.tab(svc.id, { new_ip: "203.0.113.51" })).errors).toBe(false);

    await blesta.run("service.suspend", { service_id: svc.id });
    const refused = await blesta.tab(svc.id, { new_ip: "203.0.113.52" });
    expect(message(refused.errors, "license_ip", "not_active")).toBeDefined();
    expect((await pair().bridge.service.services.get(svc.fields.license_ref!))!.ip).toBe("203.0.113.51");
  });

  it("service info shows the licence, its status and install command to the admin and the customer", async () => {
    const svc = await blesta.active(PACKAGES.cpanel.pricing[0].id, "203.0.113.60");
    const admin = await blesta.run("service.info", { service_id: svc.id, area: "admin" });
    expect(admin.html).toContain(svc.fields.license_key);
    expect(admin.html).toContain(svc.fields.license_ref);
    expect(admin.html).toMatch(/license-bridge-install-command">[^<]*203\.0\.113\.60/);
    const client = await blesta.run("service.info", { service_id: svc.id, area: "client" });
    expect(client.html).toContain("active");
    expect(client.html).toMatch(/license-bridge-install-command">[^<]*203\.0\.113\.60/);
    // Each page read is one info call, in the module log as input and output.
    expect(client.logs.map((l) => [l.direction, l.url])).toEqual([
      ["input", `${pair().bridge.url}/provision/v1/info`],
      ["output", `${pair().bridge.url}/provision/v1/info`],
    ]);
    expect(JSON.parse(client.logs[0]!.data)).toEqual({ method: "GET", params: { license_key: svc.fields.license_key } });

    // A pending order has no licence yet: the page says so and calls nothing.
    const ordered = await blesta.order(PACKAGES.cpanel.pricing[0].id, "203.0.113.61");
    const pendingInfo = await blesta.run("service.info", { service_id: ordered.result, area: "client" });
    expect(pendingInfo.html).toContain("not been ordered yet");
    expect(pendingInfo.logs).toEqual([]);
  });

  it("a bridge that rotated its token or cannot be reached is Blesta's error on the action and a note on the page, never with a token", async () => {
    const svc = await blesta.active(PACKAGES.cpanel.pricing[0].id, "203.0.113.70");
    const rotated = "rotated-token-9876543210";
    await blesta.run("row.store", { row_id: 1, meta: { token: rotated } });
    const refused = await blesta.run("service.suspend", { service_id: svc.id });
    expect(message(refused.errors, "api", "unauthorized")).toMatch(/^License Bridge \(Suspend\): .*\[unauthorized\]\. The bridge refused the token: enter its PROVISIONING_TOKEN/);
    expect(refused.service!.status).toBe("active");
    expect((await pair().bridge.service.services.get(svc.fields.license_ref!))!.status).toBe("active");

    await blesta.run("row.store", { row_id: 1, meta: { token: TEST_PROVISIONING_TOKEN, host: "127.0.0.1", port: "9" } });
    const down = await blesta.run("service.unsuspend", { service_id: svc.id });
    expect(message(down.errors, "api", "unreachable")).toMatch(/could not be reached at http:\/\/127\.0\.0\.1:9\/provision\/v1\/unsuspend/);
    const page = await blesta.run("service.info", { service_id: svc.id, area: "client" });
    expect(page.errors).toBe(false);
    expect(page.html).toContain("The licence could not be read from the bridge");
    expect(blesta.outputs()).not.toContain(rotated);
  });
});

describe.skipIf(skip !== null)(`the Blesta module when the bridge answers 202 (pending)${skip ? ` [skipped: ${skip}]` : ""}`, () => {
  const pair = usePair({ env: { PROVISION_WAIT_SECONDS: "1" } });
  const blesta = useBlesta(pair);

  it("a purchase still running is Blesta's error (the service stays pending); the next activation gets the outcome and nothing is bought twice", async () => {
    const ordered = await blesta.order(PACKAGES.cpanel.pricing[0].id, "203.0.113.80");
    const id = ordered.result as number;
    pair().sb.sandbox.setFaults({ holdMs: 3_000, holdNext: 1 });

    const slow = await blesta.activate(id);
    expect(slow.ok).toBe(false);
    expect(message(slow.errors, "api", "pending")).toMatch(/^License Bridge \(Activate\): the bridge is still working on this Activate .*Run Activate again in a minute/);
    expect(slow.service).toMatchObject({ status: "pending", fields: ordered.service!.fields });
    expect(slow.logs.at(-1)!.data).toMatch(/^HTTP 202 /);

    await waitStatus(pair().bridge, String(id), "active");
    const done = await blesta.activate(id);
    expect(done.errors).toBe(false);
    expect(done.service).toMatchObject({ status: "active", fields: { license_key: expect.stringMatching(/^lb_/) } });
    expect(pair().sb.sandbox.ledger()).toHaveLength(1);
  });

  it("an activation retried by the admin's Activate, whose $vars carry none of the stored fields, names the same service and buys once (issue 22)", async () => {
    const ordered = await blesta.order(PACKAGES.cpanel.pricing[0].id, "203.0.113.81");
    const id = ordered.result as number;
    pair().sb.sandbox.setFaults({ holdMs: 3_000, holdNext: 1 });

    const slow = await blesta.activate(id);
    expect(message(slow.errors, "api", "pending")).toBeDefined();
    expect(slow.service).toMatchObject({ status: "pending", fields: ordered.service!.fields });
    await waitStatus(pair().bridge, String(id), "active");

    // Blesta's admin page posts the form's fields only: no license_ref, no license_key.
    const activated = await blesta.adminActivate(id, PACKAGES.cpanel.id, "203.0.113.81");
    expect(activated.calls).toEqual([["addService", { use_module: "true", status: "active" }]]);
    expect(activated.errors).toBe(false);
    expect(activated.service).toMatchObject({ status: "active", fields: { license_ref: String(id), license_ip: "203.0.113.81", license_key: expect.stringMatching(/^lb_/) } });
    expect(JSON.parse(activated.logs[0]!.data).params.service_identifier).toBe(String(id));
    expect(pair().sb.sandbox.ledger()).toMatchObject([{ op: "register", ip: "203.0.113.81" }]);
    expect((await pair().bridge.admin(`/admin/services/${id}`)).body).toMatchObject({ status: "active", module: `blesta/${MODULE_VERSION}` });
  });
});
