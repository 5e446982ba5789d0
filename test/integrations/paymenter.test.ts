/**
 * The Paymenter server extension (integrations/paymenter/extensions/Servers/LicenseBridge/) run for
 * real by php-cli against a running bridge and reseller sandbox. integrations/paymenter/tests/
 * paymenter.php loads stand-ins for Paymenter v1.5.8 (tests/paymenter-stub.php: the Server base
 * class and its config(), ExtensionHelper, the Service/Product/Plan models with properties(), the
 * Service "updated" event, the settings table with its encrypting Saving/Retrieved events, and
 * Laravel's router with its route cache) and runs one panel flow per call, as Paymenter runs it:
 * the server is created through the admin's create page, the extension is built by
 * ExtensionHelper with the server's settings, called with ($service, $settings, $properties), and
 * a thrown exception is a failed job / a red admin notification.
 *
 * Every run is checked for the provisioning token in its output, its log lines, its pages and, in
 * clear, in Paymenter's database.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MODULE_VERSION } from "../../src/provisioning/module-clients.js";
import { TEST_PROVISIONING_TOKEN } from "../helpers/bridge.js";
import { upstreamCalls, usePair, waitStatus, type Pair } from "../helpers/e2e-harness.js";
import { INTEGRATIONS, phpUnavailable, runPhp } from "../helpers/php.js";

const skip = phpUnavailable();
const DRIVER = join(INTEGRATIONS, "paymenter/tests/paymenter.php");

interface Field {
  type: string;
  label?: string;
  text?: string;
  name?: string;
  [k: string]: unknown;
}

interface Notification {
  message: string;
  type: "success" | "error";
}

interface PropertyRow {
  key: string;
  name: string | null;
  value: string;
}

interface Out {
  command: string;
  failed_jobs: { job: string; service: string; exception: string; message: string }[];
  jobs: { job: string; service: string; outcome: "done" | "failed" }[];
  emails: { template: string; data: Record<string, string> }[];
  result?: unknown;
  validation_errors?: Record<string, string[]>;
  service_id?: string;
  admin_notification?: { type: string; title: string; body?: string };
  page?: { fields: Field[]; buttons: Field[]; views: Field[]; html: string | null; notification: Notification | null };
  response?: { status: number; location?: string };
  route?: { uri: string; middleware: string[]; name: string | null };
  session_notification?: Notification | null;
  routes_cached: boolean;
  cached_routes?: string[];
  server_id?: string;
  settings?: Record<string, { type: string; encrypted: boolean; stored_as_typed: boolean }>;
  state?: { service: Record<string, string | number | null>; properties: Record<string, PropertyRow> };
  extensions?: { name: string; type: string; meta: Record<string, string> | null }[];
  config?: Field[];
  product_config?: Field[];
  checkout_config?: Field[];
  methods?: string[];
  log: { level: string; message: string; context: Record<string, unknown> }[];
}

/** Paymenter products: id → [bridge product id, plan id]. */
const PRODUCTS: Record<string, [string, string]> = {
  "1": ["12", "1"], // cPanel, monthly
  "2": ["13", "1"], // LiteSpeed (max_ip_changes 3), monthly
  "3": ["14", "1"], // another LiteSpeed core
  "4": ["12", "2"], // cPanel billed weekly: no licence cycle
  "5": ["12", "3"], // cPanel, yearly
};

/** A stand-in Paymenter "database" in a temp dir, and a runner that checks every run for the token. */
class FakePaymenter {
  readonly dir = mkdtempSync(join(tmpdir(), "lb-paymenter-"));
  readonly statePath = join(this.dir, "state.json");
  readonly logPath = join(this.dir, "laravel.jsonl");
  /** Every secret a run may have held: none may show anywhere. */
  readonly secrets = new Set<string>([TEST_PROVISIONING_TOKEN]);
  /** What the admin's "Create" of the server stored. */
  created!: Out;

  private constructor() {
    const products = Object.fromEntries(
      Object.entries(PRODUCTS).map(([id, [bridgeId, plan]]) => [id, { id, name: `Licence ${bridgeId}`, server_id: "1", plan_id: plan, setting_values: { bridge_product_id: bridgeId } }]),
    );
    const state = {
      servers: {},
      settings: {},
      products,
      plans: {
        "1": { id: "1", type: "recurring", billing_period: 1, billing_unit: "month" },
        "2": { id: "2", type: "recurring", billing_period: 1, billing_unit: "week" },
        "3": { id: "3", type: "recurring", billing_period: 1, billing_unit: "year" },
      },
      users: {
        "7": { id: "7", first_name: "Ann", last_name: "Example", email: "ann@example.com" },
        "8": { id: "8", first_name: "Bob", last_name: "Other", email: "bob@example.com" },
        "9": { id: "9", first_name: "Cy\tril", last_name: "\u{1F600}".repeat(150), email: "cy@example.com" },
      },
      services: {},
      properties: {},
      session: { _token: "csrf-token-of-the-session" },
    };
    writeFileSync(this.statePath, JSON.stringify(state, null, 2));
  }

  /**
   * A Paymenter whose admin created the LicenseBridge server (Admin → Servers → Create) with the
   * bridge's URL and token; `before` runs first (e.g. `php artisan route:cache` before any server).
   */
  static async create(bridgeUrl: string, settings: Record<string, unknown> = {}, before: string[][] = []): Promise<FakePaymenter> {
    const pm = new FakePaymenter();
    if (typeof settings.token === "string") pm.secrets.add(settings.token);
    for (const command of before) await pm.run(command[0]!, ...command.slice(1));
    pm.created = await pm.run("create-server", JSON.stringify({ bridge_url: bridgeUrl, token: TEST_PROVISIONING_TOKEN, timeout: "30", allow_private_ips: false, ...settings }));
    return pm;
  }

  async run(command: string, ...args: string[]): Promise<Out> {
    const run = await runPhp(DRIVER, [command, ...args], { PM_STATE: this.statePath, PM_LOG: this.logPath });
    expect(run.code, `php paymenter.php ${command} ${args.join(" ")}\n${run.stderr}\n${run.stdout}`).toBe(0);
    expect(run.stderr, `php paymenter.php ${command} wrote to stderr`).toBe("");
    for (const secret of this.secrets) {
      expect(run.stdout, `the token in the output of ${command}`).not.toContain(secret);
      expect(this.logText(), `the token in the log after ${command}`).not.toContain(secret);
      expect(readFileSync(this.statePath, "utf8"), `the token in clear in Paymenter's database after ${command}`).not.toContain(secret);
    }
    return run.json<Out>();
  }

  /** Orders product `product` for the IP and pays the first invoice; returns the service id. */
  async order(product: string, ip: string): Promise<{ id: string; paid: Out }> {
    const checkout = await this.run("checkout", product, ip);
    expect(checkout.validation_errors).toBeUndefined();
    const id = checkout.service_id!;
    return { id, paid: await this.run("pay", id) };
  }

  /** An admin edits the server's settings (Admin → Servers → the server → Save). */
  async editServer(settings: Record<string, unknown>): Promise<Out> {
    return this.run("edit-server", JSON.stringify(settings));
  }

  logText(): string {
    return existsSync(this.logPath) ? readFileSync(this.logPath, "utf8") : "";
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

const fieldText = (page: Out["page"], label: string) => page!.fields.find((f) => f.label === label)?.text;
/** The bridge's paid-until for a Paymenter expiry (a `date` cast: midnight UTC). */
const midnight = (ymd: unknown) => Date.parse(`${String(ymd)}T00:00:00Z`);

describe.skipIf(skip !== null)(`Paymenter extension LicenseBridge against a running bridge${skip ? ` [skipped: ${skip}]` : ""}`, () => {
  const pair = usePair();
  const made: FakePaymenter[] = [];
  const paymenter = async (p: Pair = pair(), settings: Record<string, unknown> = {}, before: string[][] = []) => {
    const pm = await FakePaymenter.create(p.bridge.url, settings, before);
    made.push(pm);
    return pm;
  };
  afterEach(() => {
    for (const pm of made.splice(0)) pm.cleanup();
  });

  it("is found where Paymenter looks, with forms of Paymenter's input types and the token as an encrypted password", async () => {
    const out = await (await paymenter()).run("discover");
    expect(out.extensions).toEqual([expect.objectContaining({ name: "LicenseBridge", type: "server" })]);
    expect(out.extensions![0]!.meta).toMatchObject({ name: "License Bridge" });
    const adminTypes = ["text", "password", "email", "number", "textarea", "markdown", "select", "tags", "checkbox", "color", "file", "time", "placeholder"];
    for (const f of [...out.config!, ...out.product_config!]) expect(adminTypes).toContain(f.type);
    expect(out.config!.find((f) => f.name === "token")).toMatchObject({ type: "password", encrypted: true, required: true });
    expect(out.product_config!.map((f) => f.name)).toEqual(["bridge_product_id"]);
    expect(out.checkout_config).toEqual([expect.objectContaining({ name: "license_ip", type: "text", required: true })]);
    expect(out.methods).toEqual(
      expect.arrayContaining(["getConfig", "testConfig", "getProductConfig", "getCheckoutConfig", "createServer", "suspendServer", "unsuspendServer", "terminateServer", "upgradeServer", "getActions", "getView", "boot"]),
    );
  });

  it("the token is stored encrypted from the server's first save (Admin → Servers → Create), and the extension reads it back", async () => {
    const pm = await paymenter();
    // CreateServer stores the values with the table's defaults; the enabled() hook it calls next
    // gives each setting its option's flags, as the edit page would.
    expect(pm.created.settings).toEqual({
      allow_private_ips: { type: "boolean", encrypted: false, stored_as_typed: true },
      bridge_url: { type: "string", encrypted: false, stored_as_typed: true },
      timeout: { type: "integer", encrypted: false, stored_as_typed: true },
      token: { type: "string", encrypted: true, stored_as_typed: false },
    });
    // (FakePaymenter.run checked that the token is nowhere in clear in Paymenter's database.)
    expect((await pm.run("test-config")).result).toBe(true);
    const { id, paid } = await pm.order("1", "203.0.113.69");
    expect(paid.failed_jobs).toEqual([]);
    // The bridge recorded which module bought it (the shared client's User-Agent, panel "paymenter").
    expect((await pair().bridge.admin(`/admin/services/${id}`)).body).toMatchObject({ status: "active", module: `paymenter/${MODULE_VERSION}` });

    // Saving the server again (the edit page) keeps it encrypted and readable.
    const edited = await pm.editServer({ timeout: "25" });
    expect(edited.settings!.token).toEqual({ type: "string", encrypted: true, stored_as_typed: false });
    expect((await pm.run("test-config")).result).toBe(true);
  });

  it("Test Connection: true with the bridge's token, the reason with a wrong token or URL", async () => {
    const pm = await paymenter();
    pm.secrets.add("wrong-token-0123456789abcdef");
    expect((await pm.run("test-config")).result).toBe(true);
    expect((await pm.run("test-config", JSON.stringify({ token: "wrong-token-0123456789abcdef" }))).result).toMatch(/refused the token \(HTTP 401\)/);
    expect((await pm.run("test-config", JSON.stringify({ bridge_url: "http://127.0.0.1:9" }))).result).toMatch(/could not be reached/);
    expect((await pm.run("test-config", JSON.stringify({ bridge_url: "licenses.example.com" }))).result).toMatch(/must start with http/);
  });

  it("checkout refuses an IP no licence can use and stores a good one as the service property license_ip", async () => {
    const pm = await paymenter();
    for (const bad of ["not-an-ip", "127.0.0.1", "10.0.0.5", "100.64.1.1", "224.0.0.9", "fe80::1"]) {
      const out = await pm.run("checkout", "1", bad);
      expect(out.validation_errors?.license_ip?.length, bad).toBeGreaterThan(0);
      expect(out.service_id).toBeUndefined();
    }
    const ok = await pm.run("checkout", "1", "203.0.113.70");
    expect(ok.state!.service).toMatchObject({ status: "pending" });
    expect(ok.state!.properties.license_ip).toMatchObject({ value: "203.0.113.70" });
    expect(pair().sb.sandbox.requests()).toEqual([]); // nothing reaches the reseller at checkout
  });

  it("paying the order buys the licence once, keeps its key, mails it, and sends the expiry as paid-until", async () => {
    const pm = await paymenter();
    const { id, paid } = await pm.order("1", "203.0.113.71");
    expect(paid.failed_jobs).toEqual([]);
    expect(paid.jobs).toEqual([{ job: "CreateJob", service: id, outcome: "done" }]);
    const row = (await pair().bridge.service.services.get(id))!;
    expect(row).toMatchObject({ status: "active", ip: "203.0.113.71", product_id: "12", billing_cycle: "monthly", customer_email: "ann@example.com", customer_name: "Ann Example" });
    expect(paid.state!.properties.license_key).toMatchObject({ value: row.license_key, name: "Licence key" });
    expect(paid.emails).toEqual([
      { template: "new_server_created", data: { license_key: row.license_key, license_ip: "203.0.113.71", install_command: expect.stringContaining("203.0.113.71") } },
    ]);
    expect(row.paid_until).toBe(midnight(paid.state!.service.expires_at));
    expect(pair().sb.sandbox.ledger().map((c) => [c.op, c.ip, c.months])).toEqual([["register", "203.0.113.71", 1]]);
  });

  it("a customer name the bridge would refuse (control characters, too long) is cleaned so it never blocks the purchase", async () => {
    const pm = await paymenter();
    const checkout = await pm.run("checkout", "1", "203.0.113.93", "9");
    const paid = await pm.run("pay", checkout.service_id!);
    expect(paid.failed_jobs).toEqual([]);
    const name = (await pair().bridge.service.services.get(checkout.service_id!))!.customer_name!;
    expect(name.startsWith("Cy ril \u{1F600}")).toBe(true); // the tab became a space
    expect(name.length).toBeLessThanOrEqual(200);
  });

  it("createServer called again (the admin's Create, a re-dispatched CreateJob) answers the same licence and buys nothing", async () => {
    const pm = await paymenter();
    const { id } = await pm.order("5", "203.0.113.72");
    const again = await pm.run("admin", "create", id);
    expect(again.admin_notification).toMatchObject({ type: "success" });
    const third = await pm.run("admin", "create", id);
    const row = (await pair().bridge.service.services.get(id))!;
    expect(third.result).toMatchObject({ license_key: row.license_key });
    expect(row.billing_cycle).toBe("annually");
    expect(pair().sb.sandbox.ledger().map((c) => [c.op, c.months])).toEqual([["register", 12]]);
  });

  it("a refused purchase (no reseller balance) fails the job with the bridge's reason; Create after the top-up buys it once", async () => {
    const pm = await paymenter();
    pair().sb.sandbox.setBalance(0);
    const { id, paid } = await pm.order("1", "203.0.113.73");
    expect(paid.jobs).toEqual([{ job: "CreateJob", service: id, outcome: "failed" }]);
    expect(paid.failed_jobs[0]).toMatchObject({
      exception: "Exception",
      message: expect.stringMatching(/could not create the licence of service #1 \(HTTP 502\): .*\[insufficient_balance\]\. The reseller account needs balance: top it up, then run Create server again; nothing is bought twice\.$/),
    });
    expect(paid.emails).toEqual([]);
    expect(paid.log.some((l) => l.level === "error" && l.message.includes("insufficient_balance"))).toBe(true); // report()ed
    expect(pair().sb.sandbox.ledger()).toEqual([]);
    expect((await pair().bridge.service.services.get(id))?.status).not.toBe("active");

    pair().sb.sandbox.setBalance(1000);
    const retried = await pm.run("admin", "create", id);
    expect(retried.admin_notification).toMatchObject({ type: "success" });
    expect((await pair().bridge.service.services.get(id))?.status).toBe("active");
    expect(pair().sb.sandbox.ledger().filter((c) => c.op === "register")).toHaveLength(1);
  });

  it("a refusal in the admin's Trigger Extension Action is shown as the red notification, with the bridge's reason", async () => {
    const pm = await paymenter();
    const checkout = await pm.run("checkout", "4", "203.0.113.74"); // weekly plan
    const out = await pm.run("admin", "create", checkout.service_id!);
    expect(out.admin_notification).toMatchObject({ type: "danger", title: "Error occured while triggering the action:", body: expect.stringMatching(/weekly|every 1 week/) });
    expect(pair().sb.sandbox.requests()).toEqual([]);
  });

  it("overdue suspends, paying unsuspends and moves paid-until, long overdue terminates the licence", async () => {
    const pm = await paymenter();
    const { id } = await pm.order("1", "203.0.113.75");
    await pm.run("edit-expiry", id, "2020-01-01"); // overdue
    expect((await pair().bridge.service.services.get(id))!.paid_until).toBe(midnight("2020-01-01"));

    const suspended = await pm.run("overdue", id);
    expect(suspended.jobs).toEqual([{ job: "SuspendJob", service: id, outcome: "done" }]);
    expect(suspended.emails.map((e) => e.template)).toEqual(["server_suspended"]);
    expect((await pair().bridge.service.services.get(id))!.status).toBe("suspended");
    expect(upstreamCalls(pair().sb, "suspend").map((c) => c.params.ip)).toEqual(["203.0.113.75"]);

    const paid = await pm.run("pay", id);
    expect(paid.jobs).toEqual([{ job: "UnsuspendJob", service: id, outcome: "done" }]);
    const row = (await pair().bridge.service.services.get(id))!;
    expect(row.status).toBe("active");
    expect(row.paid_until).toBe(midnight(paid.state!.service.expires_at));
    expect(row.paid_until).toBeGreaterThan(Date.now());
    expect(upstreamCalls(pair().sb, "unsuspend")).toHaveLength(1);

    await pm.run("overdue", id);
    const ended = await pm.run("cron-terminate", id);
    expect(ended.jobs).toEqual([{ job: "TerminateJob", service: id, outcome: "done" }]);
    expect(ended.emails.map((e) => e.template)).toEqual(["server_terminated"]);
    expect((await pair().bridge.service.services.get(id))!.status).toBe("terminated");
    expect(ended.state!.service.status).toBe("cancelled");
  });

  it("a paid renewal of an active service (no extension call in Paymenter) moves the licence's paid-until and buys nothing at once", async () => {
    const pm = await paymenter();
    const { id, paid: first } = await pm.order("1", "203.0.113.76");
    const renewed = await pm.run("pay", id);
    expect(renewed.jobs).toEqual([]); // RenewServiceService: an active service gets no job
    const due = renewed.state!.service.expires_at;
    expect(due).not.toBe(first.state!.service.expires_at);
    const row = (await pair().bridge.service.services.get(id))!;
    expect(row.paid_until).toBe(midnight(due));
    expect(pair().sb.sandbox.ledger().map((c) => c.op)).toEqual(["register"]); // the renewal sweep buys the next term later

    await pm.run("edit-expiry", id, "2031-03-04"); // an admin's edit, committed in a transaction
    expect((await pair().bridge.service.services.get(id))!.paid_until).toBe(midnight("2031-03-04"));
  });

  it("a renewal the bridge cannot hear goes through in Paymenter, is reported, and the admin's Upgrade action sends it again", async () => {
    const pm = await paymenter();
    const { id } = await pm.order("1", "203.0.113.92");
    const before = (await pair().bridge.service.services.get(id))!.paid_until;
    await pm.editServer({ bridge_url: "http://127.0.0.1:9" });
    const renewed = await pm.run("pay", id);
    expect(renewed.state!.service).toMatchObject({ status: "active" });
    expect(renewed.log.find((l) => l.level === "error")?.message).toMatch(/could not record the paid-until date .* of service #1 \(HTTP 0\): .*could not be reached.*\[unreachable\].*Upgrade server sends the date again/);
    expect((await pair().bridge.service.services.get(id))!.paid_until).toBe(before);

    await pm.editServer({ bridge_url: pair().bridge.url });
    const resent = await pm.run("admin", "upgrade", id);
    expect(resent.admin_notification).toMatchObject({ type: "success" });
    expect((await pair().bridge.service.services.get(id))!.paid_until).toBe(midnight(renewed.state!.service.expires_at));
    expect(upstreamCalls(pair().sb, "change-core")).toEqual([]);
  });

  it("a paid upgrade between LiteSpeed products changes the core; an upgrade the bridge cannot apply fails the job with its reason", async () => {
    const pm = await paymenter();
    const { id } = await pm.order("2", "203.0.113.77");
    const up = await pm.run("upgrade", id, "3");
    expect(up.jobs).toEqual([{ job: "UpgradeJob", service: id, outcome: "done" }]);
    expect(await pair().bridge.service.services.get(id)).toMatchObject({ product_id: "14", variant: "litespeed", upstream_variant: "litespeed" });
    // The first change-core makes the new licence a litespeed4 (product 13); the upgrade is the second.
    expect(upstreamCalls(pair().sb, "change-core").map((c) => c.params)).toEqual([
      { ip: "203.0.113.77", old_type: "litespeed", new_type: "litespeed4" },
      { ip: "203.0.113.77", old_type: "litespeed4", new_type: "litespeed" },
    ]);
    expect(pair().sb.sandbox.ledger()).toHaveLength(1);

    const other = await pm.order("1", "203.0.113.78");
    const refused = await pm.run("upgrade", other.id, "2");
    expect(refused.failed_jobs[0]).toMatchObject({ job: "UpgradeJob", message: expect.stringMatching(/could not change to product 13 .*only a LiteSpeed core change/) });
    expect((await pair().bridge.service.services.get(other.id))!.product_id).toBe("12");
  });

  it("the client area shows the licence, its install command and the change-IP form, and nothing while the service is not active", async () => {
    const pm = await paymenter();
    const { id } = await pm.order("1", "203.0.113.79");
    const { page } = await pm.run("show", id);
    const row = (await pair().bridge.service.services.get(id))!;
    expect(fieldText(page, "Licence key")).toBe(row.license_key);
    expect(fieldText(page, "Licence status")).toBe("active");
    expect(fieldText(page, "Licensed IP")).toBe("203.0.113.79");
    expect(fieldText(page, "IP changes left")).toBe("unlimited");
    expect(page!.views).toEqual([{ type: "view", name: "license", label: "Licence" }]);
    expect(page!.html).toMatch(/<pre[^>]*data-install-command><code>[^<]*203\.0\.113\.79/);
    expect(page!.html).toContain(`action="http://paymenter.test/extensions/licensebridge/services/${id}/change-ip"`);
    expect(page!.html).toContain('name="_token" value="csrf-token-of-the-session"');

    await pm.run("overdue", id);
    const hidden = await pm.run("show", id);
    expect(hidden.page).toMatchObject({ fields: [], views: [], html: null });
  });

  it("the customer changes the IP within max_ip_changes (product 13: 3) and is refused clearly when none are left", async () => {
    const pm = await paymenter();
    const { id } = await pm.order("2", "203.0.113.80");
    expect(fieldText((await pm.run("show", id)).page, "IP changes left")).toBe("3");

    for (const [n, ip] of ["203.0.113.81", "203.0.113.82", "203.0.113.83"].entries()) {
      const out = await pm.run("post-change-ip", id, ip);
      expect(out.response).toEqual({ status: 302, location: `http://paymenter.test/services/${id}?tab=license` });
      expect(out.session_notification).toEqual({ type: "success", message: `The licence now belongs to ${ip}. IP changes left: ${2 - n}.` });
      expect(out.state!.properties.license_ip).toMatchObject({ value: ip });
      expect((await pair().bridge.service.services.get(id))!.ip).toBe(ip);
    }
    const after = await pm.run("show", id);
    expect(after.page!.notification).toMatchObject({ type: "success" }); // shown once on the next page (HasNotifications)
    expect(fieldText(after.page, "IP changes left")).toBe("0");
    expect(after.page!.html).toContain("no IP changes left");
    expect(after.page!.html).not.toContain("<form");

    const refused = await pm.run("post-change-ip", id, "203.0.113.84");
    expect(refused.session_notification).toEqual({ type: "error", message: "This licence has no IP changes left. Contact support if your server has moved." });
    expect(refused.state!.properties.license_ip).toMatchObject({ value: "203.0.113.83" });
    expect((await pair().bridge.service.services.get(id))!.ip).toBe("203.0.113.83");
    expect(upstreamCalls(pair().sb, "change-ip")).toHaveLength(3);
  });

  it("the change-IP form refuses a bad IP before the bridge, another customer's service, a missing CSRF token, and never names another service", async () => {
    const pm = await paymenter();
    const { id } = await pm.order("1", "203.0.113.85");
    const other = await pm.order("1", "203.0.113.86");

    const bad = await pm.run("post-change-ip", id, "10.1.1.1");
    expect(bad.session_notification).toEqual({ type: "error", message: "That IP address cannot hold a licence: it is a private address." });
    expect((await pm.run("post-change-ip", id, "203.0.113.90", "8")).response).toEqual({ status: 404 });
    expect((await pm.run("post-change-ip", id, "203.0.113.90", "7", "forged")).response).toEqual({ status: 419 });

    const taken = await pm.run("post-change-ip", id, "203.0.113.86");
    expect(taken.session_notification).toEqual({ type: "error", message: "That IP address already has a licence of this kind." });
    expect(JSON.stringify(taken.session_notification)).not.toContain(`service ${other.id}`);
    expect(upstreamCalls(pair().sb, "change-ip")).toEqual([]);
    expect((await pair().bridge.service.services.get(id))!.ip).toBe("203.0.113.85");
  });

  it("the change-IP form works under php artisan route:cache, whether the cache was made before the server existed or after", async () => {
    // Made before: the cache holds Paymenter's routes only; Laravel puts it in place of the routes
    // added in boot(), and the extension adds its route again when the request is routed.
    const early = await paymenter(pair(), {}, [["artisan", "route:cache"]]);
    expect(early.created.routes_cached).toBe(true);
    const { id } = await early.order("1", "203.0.113.94");
    const page = await early.run("show", id);
    expect(page.page!.notification).toBeNull();
    expect(page.page!.html).toContain(`action="http://paymenter.test/extensions/licensebridge/services/${id}/change-ip"`);
    const moved = await early.run("post-change-ip", id, "203.0.113.95");
    expect(moved.route).toEqual({ uri: "/extensions/licensebridge/services/{service}/change-ip", middleware: ["web", "auth"], name: "extensions.servers.licensebridge.change-ip" });
    expect(moved.response).toEqual({ status: 302, location: `http://paymenter.test/services/${id}?tab=license` });
    expect((await pair().bridge.service.services.get(id))!.ip).toBe("203.0.113.95");
    expect((await early.run("post-change-ip", id, "203.0.113.96", "7", "forged")).response).toEqual({ status: 419 });

    // Made after: a fresh application boots the extension, so its route is in the cache itself.
    const late = await paymenter();
    const cached = await late.run("artisan", "route:cache");
    expect(cached.cached_routes).toContain("extensions.servers.licensebridge.change-ip");
    const other = await late.order("1", "203.0.113.97");
    expect((await late.run("post-change-ip", other.id, "203.0.113.98")).response).toMatchObject({ status: 302 });
    expect((await pair().bridge.service.services.get(other.id))!.ip).toBe("203.0.113.98");
    expect(upstreamCalls(pair().sb, "change-ip")).toHaveLength(2);
  });

  it("an unreachable bridge fails the job with a readable reason; the page says the licence is unavailable", async () => {
    const pm = await paymenter(pair(), { bridge_url: "http://127.0.0.1:9", timeout: "5" });
    const { paid, id } = await pm.order("1", "203.0.113.87");
    expect(paid.failed_jobs[0]!.message).toMatch(/could not be reached at http:\/\/127\.0\.0\.1:9\/provision\/v1\/create.*\[unreachable\]\. Check the server's address, port and TLS setting/);
    const { page } = await pm.run("show", id); // Paymenter set the service active although the job failed
    expect(fieldText(page, "Licence")).toMatch(/unavailable/);
  });

  it("the token reaches no log line, exception, e-mail or page, while the calls are logged without it", async () => {
    const pm = await paymenter();
    const { id } = await pm.order("2", "203.0.113.88");
    await pm.run("show", id);
    await pm.run("post-change-ip", id, "203.0.113.89");
    await pm.run("overdue", id);
    // (every run above was checked for the token by FakePaymenter.run)
    const log = pm.logText();
    expect(log).toContain('"url":"http://127.0.0.1:');
    expect(log).toContain('"service_identifier":"1"');
    for (const call of ["create", "info", "change-ip", "suspend"]) expect(log).toContain(`license-bridge: ${call} answered HTTP 200`);
    expect(log).not.toContain(TEST_PROVISIONING_TOKEN);
    expect(log.toLowerCase()).not.toContain("bearer");

    const wrong = await paymenter(pair(), { token: "a-wrong-token-that-must-not-leak" });
    const refused = await wrong.order("1", "203.0.113.90");
    expect(refused.paid.failed_jobs[0]!.message).toMatch(/\(HTTP 401\): .*\[unauthorized\]\. The bridge refused the token: enter its PROVISIONING_TOKEN/);
    expect(wrong.logText()).toContain("answered HTTP 401");
  });
});

describe.skipIf(skip !== null)(`Paymenter extension LicenseBridge, a purchase still running (PROVISION_WAIT_SECONDS=1)${skip ? ` [skipped: ${skip}]` : ""}`, () => {
  const pair = usePair({ env: { PROVISION_WAIT_SECONDS: "1" } });
  let pm: FakePaymenter | undefined;
  afterEach(() => pm?.cleanup());

  it("a pending (202) answer fails the job saying so and keeps the key; Create later confirms the licence without buying again", async () => {
    pm = await FakePaymenter.create(pair().bridge.url);
    pair().sb.sandbox.setFaults({ holdMs: 3000, holdNext: 1 });
    const { id, paid } = await pm.order("1", "203.0.113.91");
    expect(paid.failed_jobs[0]).toMatchObject({ job: "CreateJob", message: expect.stringMatching(/still working on this Create server .*Run Create server again in a minute/) });
    const key = paid.state!.properties.license_key?.value;
    expect(key).toMatch(/^lb_/);

    await waitStatus(pair().bridge, id, "active");
    const confirmed = await pm.run("admin", "create", id);
    expect(confirmed.admin_notification).toMatchObject({ type: "success" });
    expect(confirmed.result).toMatchObject({ license_key: key });
    expect(pair().sb.sandbox.ledger().filter((c) => c.op === "register")).toHaveLength(1);
  });
});
