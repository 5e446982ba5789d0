/**
 * The WHMCS addon module (integrations/whmcs/, PHP) against a real bridge and reseller sandbox:
 * tests/fire.php loads stand-ins for WHMCS (tests/whmcs-stub.php) and the REAL hooks.php, then
 * fires one hook. Needs php-cli with the curl and pdo_sqlite extensions; without them (or with
 * LB_SKIP_PHP=1) every test here is skipped, saying why.
 */
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TEST_SECRET } from "../helpers/bridge.js";
import { settle, upstreamCalls, usePair, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";

const execFileAsync = promisify(execFile);
const MODULE_ROOT = fileURLToPath(new URL("../../integrations/whmcs", import.meta.url));
const FIRE = join(MODULE_ROOT, "tests/fire.php");

/** Why the PHP tests cannot run here, or null when they can. */
function phpUnavailable(): string | null {
  if (process.env.LB_SKIP_PHP) return "LB_SKIP_PHP is set";
  const probe = spawnSync("php", ["-r", "foreach (['curl', 'pdo_sqlite'] as $e) { if (!extension_loaded($e)) { echo $e; exit(3); } }"], {
    encoding: "utf8",
    timeout: 10_000,
  });
  if (probe.error) return "php is not on PATH (apt-get install php-cli php-curl php-sqlite3)";
  if (probe.status !== 0) return `the PHP extension ${probe.stdout.trim() || "curl/pdo_sqlite"} is missing (apt-get install php-curl php-sqlite3)`;
  return null;
}

const skipReason = phpUnavailable();
const hasPhp = skipReason === null;
const title = (name: string) => (hasPhp ? name : `${name} [skipped: ${skipReason}]`);

/** The secret in every form that must never reach a log. */
const SECRET_B64 = TEST_SECRET.slice("whsec_".length);
const SECRET_RAW = Buffer.from(SECRET_B64, "base64").toString("latin1");

interface FixtureService {
  serviceid: string;
  pid: string;
  billingcycle: string;
  nextduedate: string;
  dedicatedip: string;
  status: string;
  email: string;
  firstname: string;
  lastname: string;
}

interface Delivery {
  webhook_id: string;
  service_id: string;
  event_type: string;
  status: number;
  outcome: "delivered" | "retry" | "give_up";
  attempts: number;
  row_status: string;
  error?: string;
}

interface TraceEntry {
  hook: string;
  action?: string;
  service_id?: string;
  webhook_id?: string;
  type?: string;
  queued?: boolean;
  skipped?: string;
  deliveries?: Delivery[];
}

interface FireResult {
  command: string;
  callbacks?: number;
  trace: TraceEntry[];
  result?: Record<string, unknown>;
  html?: string;
  queue?: QueueRow[];
  state?: Record<string, unknown>[];
}

interface QueueRow {
  id: number;
  webhook_id: string;
  service_id: string;
  event_type: string;
  payload: string;
  status: "pending" | "failed";
  attempts: number;
  last_status: number | null;
  last_error: string | null;
}

interface LogEntry {
  log: "module" | "activity";
  action?: string;
  request?: unknown;
  response?: unknown;
  processed?: string;
  message?: string;
}

/** A stand-in WHMCS installation: settings, services and invoices in a JSON fixture; queue in SQLite. */
class FakeWhmcs {
  readonly dir = mkdtempSync(join(tmpdir(), "lb-whmcs-"));
  readonly fixturePath = join(this.dir, "fixture.json");
  readonly logPath = join(this.dir, "module-log.jsonl");
  settings: Record<string, string>;
  services: Record<string, FixtureService> = {};
  invoices: Record<string, string[]> = {};
  db = join(this.dir, "whmcs.sqlite");

  constructor(bridgeUrl: string) {
    this.settings = { bridge_url: bridgeUrl, signing_secret: TEST_SECRET, product_ids: "", timeout: "5" };
  }

  addService(id: string, over: Partial<FixtureService> = {}): FixtureService {
    const svc: FixtureService = {
      serviceid: id,
      pid: "12",
      billingcycle: "Monthly",
      nextduedate: "2030-01-15",
      dedicatedip: "203.0.113.10",
      status: "Active",
      email: "ann@example.com",
      firstname: "Ann",
      lastname: "Example",
      ...over,
    };
    this.services[id] = svc;
    return svc;
  }

  /** $vars of an AfterModule* hook: the module parameters WHMCS passes, `model` included. */
  moduleVars(id: string, over: Record<string, unknown> = {}): Record<string, unknown> {
    const s = this.services[id]!;
    return {
      params: {
        serviceid: Number(id),
        userid: 1,
        pid: Number(s.pid),
        dedicatedip: s.dedicatedip,
        addonId: 0,
        clientsdetails: { userid: 1, email: s.email, firstname: s.firstname, lastname: s.lastname, fullname: `${s.firstname} ${s.lastname}` },
        model: { id: Number(id), packageid: Number(s.pid), billingcycle: s.billingcycle, nextduedate: s.nextduedate, dedicatedip: s.dedicatedip, domainstatus: s.status },
        ...over,
      },
    };
  }

  private writeFixture(): void {
    const fixture = { settings: this.settings, services: this.services, invoices: this.invoices, db: this.db, log: this.logPath };
    writeFileSync(this.fixturePath, JSON.stringify(fixture, null, 2));
  }

  /** Runs `php fire.php <command> <vars>`; fails on a non-zero exit or anything PHP printed to stderr. */
  async run(command: string, vars?: unknown): Promise<FireResult> {
    this.writeFixture();
    const args = [FIRE, command, ...(vars === undefined ? [] : [JSON.stringify(vars)])];
    const { stdout, stderr } = await execFileAsync("php", args, {
      env: { ...process.env, LB_STUB_FIXTURE: this.fixturePath },
      timeout: 25_000,
      maxBuffer: 4 * 1024 * 1024,
    });
    expect(stderr, `php ${command} wrote to stderr`).toBe("");
    return JSON.parse(stdout) as FireResult;
  }

  /** Fires one hook; returns what the module did for it. */
  async fire(hook: string, vars: unknown = {}): Promise<TraceEntry[]> {
    const out = await this.run(hook, vars);
    expect(out.callbacks, `callbacks registered for ${hook}`).toBeGreaterThan(0);
    return out.trace;
  }

  async queue(): Promise<QueueRow[]> {
    return (await this.run("queue")).queue!;
  }

  logText(): string {
    return existsSync(this.logPath) ? readFileSync(this.logPath, "utf8") : "";
  }

  log(): LogEntry[] {
    return this.logText()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as LogEntry);
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A localhost port with nothing listening on it: a bridge that is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

function deliveries(trace: TraceEntry[]): Delivery[] {
  return trace.flatMap((t) => t.deliveries ?? []);
}

function expectNoSecretIn(text: string): void {
  expect(text).not.toContain(TEST_SECRET);
  expect(text).not.toContain(SECRET_B64);
  expect(text).not.toContain(SECRET_RAW);
  expect(text).not.toMatch(/v1,[A-Za-z0-9+/=]{20,}/);
}

describe("WHMCS addon module (PHP) → bridge → reseller sandbox", () => {
  const pair = usePair();
  let whmcs: FakeWhmcs | undefined;
  const panel = () => (whmcs ??= new FakeWhmcs(pair().bridge.url));
  beforeEach(() => {
    whmcs = undefined;
  });
  afterEach(() => {
    whmcs?.cleanup();
    whmcs = undefined;
  });

  it.skipIf(!hasPhp)(title("AfterModuleCreate registers the licence once; firing the same create again buys nothing"), async () => {
    const { sb, bridge } = pair();
    const w = panel();
    w.addService("4711", { pid: "12", dedicatedip: "203.0.113.60" });

    const first = deliveries(await w.fire("AfterModuleCreate", w.moduleVars("4711")));
    expect(first).toEqual([expect.objectContaining({ webhook_id: "whmcs-create-4711", status: 202, outcome: "delivered", row_status: "deleted" })]);
    await waitStatus(bridge, "4711", "active");
    expect(bridge.service.services.get("4711")).toMatchObject({ ip: "203.0.113.60", product_id: "12", customer_email: "ann@example.com" });

    const again = deliveries(await w.fire("AfterModuleCreate", w.moduleVars("4711")));
    expect(again).toEqual([expect.objectContaining({ webhook_id: "whmcs-create-4711", status: 200, outcome: "delivered" })]);
    await settle(bridge);
    expect(sb.sandbox.ledger()).toEqual([expect.objectContaining({ op: "register", type: "cpanel", ip: "203.0.113.60", months: 1 })]);
    expect(await w.queue()).toEqual([]);
  });

  it.skipIf(!hasPhp)(title("suspend, unsuspend and terminate reach the reseller"), async () => {
    const { sb, bridge } = pair();
    const w = panel();
    w.addService("4712", { dedicatedip: "203.0.113.61" });
    await w.fire("AfterModuleCreate", w.moduleVars("4712"));
    await waitStatus(bridge, "4712", "active");

    w.services["4712"]!.status = "Suspended";
    expect(deliveries(await w.fire("AfterModuleSuspend", w.moduleVars("4712")))).toEqual([expect.objectContaining({ event_type: "service.suspended", status: 202 })]);
    await waitStatus(bridge, "4712", "suspended");
    expect(upstreamCalls(sb, "suspend").map((c) => c.params)).toEqual([{ ip: "203.0.113.61", type: "cpanel" }]);

    w.services["4712"]!.status = "Active";
    expect(deliveries(await w.fire("AfterModuleUnsuspend", w.moduleVars("4712")))).toEqual([expect.objectContaining({ event_type: "service.unsuspended", status: 202 })]);
    await waitStatus(bridge, "4712", "active");
    expect(upstreamCalls(sb, "unsuspend").map((c) => c.params)).toEqual([{ ip: "203.0.113.61", type: "cpanel" }]);

    w.services["4712"]!.status = "Terminated";
    expect(deliveries(await w.fire("AfterModuleTerminate", w.moduleVars("4712")))).toEqual([expect.objectContaining({ event_type: "service.terminated", status: 202 })]);
    await waitStatus(bridge, "4712", "terminated");
    expect(upstreamCalls(sb, "suspend")).toHaveLength(2);
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });

  it.skipIf(!hasPhp)(title("AfterModuleRenew moves paid_until to the new due date; InvoicePaid for the same payment is a duplicate"), async () => {
    const { bridge } = pair();
    const w = panel();
    w.addService("4713", { dedicatedip: "203.0.113.62", nextduedate: "2030-01-15" });
    await w.fire("AfterModuleCreate", w.moduleVars("4713"));
    await waitStatus(bridge, "4713", "active");
    await settle(bridge);

    // The payment advanced tblhosting.nextduedate; the hook's model may still hold the old date.
    const vars = w.moduleVars("4713");
    w.services["4713"]!.nextduedate = "2031-06-30";
    const renewed = deliveries(await w.fire("AfterModuleRenew", vars));
    expect(renewed).toEqual([expect.objectContaining({ event_type: "service.renewed", status: 202 })]);
    await waitFor(() => bridge.service.services.get("4713")?.paid_until === Date.parse("2031-06-30"), 10_000, "paid_until 2031-06-30");

    w.invoices["9001"] = ["4713"];
    const paid = deliveries(await w.fire("InvoicePaid", { invoiceid: 9001 }));
    expect(paid).toEqual([expect.objectContaining({ webhook_id: renewed[0]!.webhook_id, status: 200, outcome: "delivered" })]);
  });

  it.skipIf(!hasPhp)(title("AfterModuleChangePackage litespeed 13 → 15 changes the cores upstream"), async () => {
    const { sb, bridge } = pair();
    const w = panel();
    w.addService("4714", { pid: "13", dedicatedip: "203.0.113.63" });
    await w.fire("AfterModuleCreate", w.moduleVars("4714"));
    await waitFor(() => bridge.service.services.get("4714")?.upstream_variant === "litespeed4", 10_000, "litespeed4 upstream");

    w.services["4714"]!.pid = "15";
    const changed = deliveries(await w.fire("AfterModuleChangePackage", w.moduleVars("4714")));
    expect(changed).toEqual([expect.objectContaining({ event_type: "service.product_changed", status: 202 })]);
    await waitFor(() => bridge.service.services.get("4714")?.variant === "litespeed8", 10_000, "variant litespeed8");
    expect(upstreamCalls(sb, "change-core").map((c) => c.params)).toEqual([
      { ip: "203.0.113.63", old_type: "litespeed", new_type: "litespeed4" },
      { ip: "203.0.113.63", old_type: "litespeed4", new_type: "litespeed8" },
    ]);
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });

  it.skipIf(!hasPhp)(title("a changed dedicated IP on AdminServiceEdit is sent as service.ip_changed, once"), async () => {
    const { sb, bridge } = pair();
    const w = panel();
    w.addService("4715", { dedicatedip: "203.0.113.64" });
    await w.fire("AfterModuleCreate", w.moduleVars("4715"));
    await waitStatus(bridge, "4715", "active");

    w.services["4715"]!.dedicatedip = "203.0.113.65";
    const changed = deliveries(await w.fire("AdminServiceEdit", { userid: 1, serviceid: 4715 }));
    expect(changed).toEqual([expect.objectContaining({ event_type: "service.ip_changed", status: 202 })]);
    await waitFor(() => bridge.service.services.get("4715")?.ip === "203.0.113.65", 10_000, "the new IP");
    expect(upstreamCalls(sb, "change-ip").map((c) => c.params)).toEqual([{ ip: "203.0.113.64", newip: "203.0.113.65", type: "cpanel" }]);

    // Saving the service again (ServiceEdit, say from the API) without an IP change sends nothing.
    const again = await w.fire("ServiceEdit", { userid: 1, serviceid: 4715 });
    expect(deliveries(again)).toEqual([]);
    expect(again[0]?.skipped).toMatch(/unchanged/);
    await settle(bridge);
    expect(upstreamCalls(sb, "change-ip")).toHaveLength(1);
  });

  it.skipIf(!hasPhp)(title("bridge down: events wait in the retry table, the log is scrubbed; the cron delivers them once, in order"), async () => {
    const { sb, bridge } = pair();
    const w = panel();
    w.settings.bridge_url = `http://127.0.0.1:${await closedPort()}`;
    w.addService("4716", { dedicatedip: "203.0.113.66" });

    const created = deliveries(await w.fire("AfterModuleCreate", w.moduleVars("4716")));
    expect(created).toEqual([expect.objectContaining({ webhook_id: "whmcs-create-4716", status: 0, outcome: "retry", row_status: "pending" })]);
    // A later event of the same service queues behind it: the hook tries the create again, never the suspend ahead of it.
    const suspended = await w.fire("AfterModuleSuspend", w.moduleVars("4716"));
    expect(suspended[0]).toMatchObject({ type: "service.suspended", queued: true });
    expect(deliveries(suspended)).toEqual([expect.objectContaining({ webhook_id: "whmcs-create-4716", status: 0, attempts: 2 })]);

    const queued = await w.queue();
    expect(queued.map((r) => [r.event_type, r.status, r.attempts])).toEqual([
      ["service.created", "pending", 2],
      ["service.suspended", "pending", 0],
    ]);
    expect(JSON.parse(queued[0]!.payload)).toEqual({
      type: "service.created",
      service: { id: "4716", product_id: "12", billing_cycle: "monthly", ip: "203.0.113.66", customer: { email: "ann@example.com", name: "Ann Example" } },
    });
    const failure = w.log().find((e) => e.log === "module" && e.action === "send service.created");
    expect(failure).toBeDefined();
    expect(String(failure!.response)).toMatch(/curl error/);
    expect(String(failure!.processed)).toMatch(/retry table/);
    expectNoSecretIn(w.logText());
    expect(sb.sandbox.ledger()).toEqual([]);

    const html = (await w.run("output")).html!;
    expect(html).toContain("whmcs-create-4716");
    expect(html).toContain("Queued (not yet delivered) (2)");

    w.settings.bridge_url = bridge.url;
    const cron = deliveries(await w.fire("AfterCronJob"));
    expect(cron.map((d) => [d.event_type, d.status])).toEqual([
      ["service.created", 202],
      ["service.suspended", 202],
    ]);
    await waitStatus(bridge, "4716", "suspended");
    expect(await w.queue()).toEqual([]);
    expect(sb.sandbox.ledger()).toEqual([expect.objectContaining({ op: "register", ip: "203.0.113.66" })]);
    expect(upstreamCalls(sb, "register", "suspend").map((c) => c.op)).toEqual(["register", "suspend"]);

    expect(deliveries(await w.fire("AfterCronJob"))).toEqual([]);
    await settle(bridge);
    expect(sb.sandbox.ledger()).toHaveLength(1);
    expectNoSecretIn(w.logText());
  });

  it.skipIf(!hasPhp)(title("an event the bridge refuses (422) is given up; a 409 (unknown service) stays queued for the cron"), async () => {
    const { sb } = pair();
    const w = panel();
    w.addService("4717", { pid: "99", dedicatedip: "203.0.113.67" });
    const refused = deliveries(await w.fire("AfterModuleCreate", w.moduleVars("4717")));
    expect(refused).toEqual([expect.objectContaining({ status: 422, outcome: "give_up", row_status: "failed" })]);
    expect(w.log().some((e) => e.log === "activity" && /gave up on service\.created for service 4717/.test(e.message ?? ""))).toBe(true);

    w.addService("4718", { dedicatedip: "203.0.113.68", nextduedate: "2031-01-01" });
    const unknown = deliveries(await w.fire("AfterModuleRenew", w.moduleVars("4718")));
    expect(unknown).toEqual([expect.objectContaining({ event_type: "service.renewed", status: 409, outcome: "retry", row_status: "pending" })]);

    const cron = deliveries(await w.fire("AfterCronJob"));
    expect(cron).toEqual([expect.objectContaining({ service_id: "4718", status: 409, attempts: 2 })]);
    const rows = await w.queue();
    expect(rows.map((r) => [r.service_id, r.status, r.last_status])).toEqual([
      ["4717", "failed", 422],
      ["4718", "pending", 409],
    ]);
    const html = (await w.run("output")).html!;
    expect(html).toContain("Given up");
    expect(html).toMatch(/whmcs-create-4717/);
    expect(sb.sandbox.ledger()).toEqual([]);
  });

  it.skipIf(!hasPhp)(title("products outside the forward list and unsupported billing cycles are not sent"), async () => {
    const { sb, bridge } = pair();
    const w = panel();
    w.settings.product_ids = "13, 15";
    w.addService("4719", { pid: "12", dedicatedip: "203.0.113.69" });
    const filtered = await w.fire("AfterModuleCreate", w.moduleVars("4719"));
    expect(filtered[0]?.skipped).toMatch(/not in the module's "Products to forward" list/);

    w.addService("4720", { pid: "13", billingcycle: "Free Account", dedicatedip: "203.0.113.70" });
    const free = await w.fire("AfterModuleCreate", w.moduleVars("4720"));
    expect(free[0]?.skipped).toMatch(/Free Account/);
    expect(w.log().some((e) => e.log === "module" && /not forwarded/.test(e.action ?? "") && /Free Account/.test(String(e.response)))).toBe(true);

    expect(deliveries([...filtered, ...free])).toEqual([]);
    expect(await w.queue()).toEqual([]);
    expect(bridge.service.services.get("4719")).toBeUndefined();
    expect(sb.sandbox.requests()).toEqual([]);
  });

  it.skipIf(!hasPhp)(title("the admin page's test event is signed and accepted by the bridge's verifier, and buys nothing"), async () => {
    const { sb } = pair();
    const w = panel();
    expect((await w.run("activate")).result).toMatchObject({ status: "success" });
    const config = (await w.run("config")).result as { fields: Record<string, { Type: string }> };
    expect(Object.keys(config.fields)).toEqual(["bridge_url", "signing_secret", "product_ids", "timeout"]);
    expect(config.fields.signing_secret!.Type).toBe("password");

    const ok = (await w.run("output", { post: { lb_action: "test" } })).html!;
    expect(ok).toContain("HTTP 422");
    expect(ok).toContain("verified the signature");
    expect(ok).toContain("alert-success");

    w.settings.signing_secret = "whsec_" + Buffer.from("some-other-secret-0123456789").toString("base64");
    const bad = (await w.run("output", { post: { lb_action: "test" } })).html!;
    expect(bad).toContain("HTTP 401");
    expect(bad).toContain("alert-danger");
    expect(sb.sandbox.requests()).toEqual([]);
    expectNoSecretIn(w.logText());
    expect(w.logText()).not.toContain(w.settings.signing_secret.slice(6));
  });

  it.skipIf(!hasPhp)(title("a broken set-up never breaks the WHMCS action: errors are logged, events kept"), async () => {
    const w = panel();
    w.addService("4721", { dedicatedip: "203.0.113.71" });

    w.settings.signing_secret = "not-a-whsec-secret!";
    const unsent = await w.fire("AfterModuleCreate", w.moduleVars("4721"));
    expect(deliveries(unsent)).toEqual([]);
    expect((await w.queue()).map((r) => r.webhook_id)).toEqual(["whmcs-create-4721"]);
    expect(w.log().some((e) => e.log === "module" && e.action === "configuration")).toBe(true);

    // The database is gone: the hook still returns normally, and says why in the logs.
    w.db = join(w.dir, "no-such-dir", "whmcs.sqlite");
    w.settings.signing_secret = TEST_SECRET;
    const out = await w.run("AfterModuleSuspend", w.moduleVars("4721"));
    expect(out.callbacks).toBe(1);
    expect(w.log().some((e) => e.log === "activity" && /AfterModuleSuspend failed/.test(e.message ?? ""))).toBe(true);
    expectNoSecretIn(w.logText());
  });
});

describe("WHMCS addon module (PHP) unit checks", () => {
  it.skipIf(!hasPhp)(title("run-php-tests.sh: php -l on every file, then tests/unit.php"), async () => {
    const { stdout } = await execFileAsync("bash", [join(MODULE_ROOT, "run-php-tests.sh")], { timeout: 60_000 });
    expect(stdout).toMatch(/ok: \d+ checks passed/);
  });
});
