import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AMOUNT_RULE } from "../../src/cli/arguments.js";
import { readMigrations } from "../../src/store/sqlite/migrations.js";
import { databaseLabel, migrateBeyondCodeOf, readStoreOf } from "../helpers/test-store.js";
import { testBridgeEnv, createdEvent, startTestSandbox, uniqueId, type TestSandbox } from "../helpers/bridge.js";
import { freePort } from "../helpers/e2e-child.js";
import { usePairPerFile, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { runCli } from "./helpers.js";
import { DEFAULT_SANDBOX_TOKENS } from "../../src/vocabulary/sandbox-identity.js";
import { DEFAULT_CLN_SANDBOX_ADMIN_TOKEN } from "../../src/vocabulary/cln-sandbox-identity.js";

/**
 * The operator's commands (spec section 5) run in this process (the sandbox command also as the
 * real binary) against a running bridge, a database, and the reseller sandbox; every test asserts the exit code, the parsed
 * --json output, and what the command did (rows, sandbox ledger, requests, balance).
 */

const DAY_MS = 86_400_000;

interface TriggerJson {
  status: number;
  webhook_id: string;
  response: Record<string, unknown>;
}

interface RenewJson {
  queued: { service_id: string; term_end: string; job_id: number }[];
  already_queued: number;
}

/** stderr as lines, without the trailing newline. */
const lines = (text: string) => text.trimEnd().split("\n");

describe("trigger and renew against a running bridge", () => {
  // The bridge keeps the default RENEWAL_LEAD_DAYS (3): only the CLI's sweep, with 40, finds the licence due.
  let env: Record<string, string>;
  const pair = usePairPerFile({
    async setup({ bridge }) {
      env = bridge.env;
    },
  });
  const triggered = uniqueId("svc");
  const webhookId = uniqueId("msg");
  let firstEventId: unknown;

  const trigger = (args: string[]) => runCli(["trigger", ...args, "--url", pair().bridge.url, "--json"], env);
  const eventRows = async () => (await pair().bridge.service.store.counts()).events;

  it("trigger created signs and sends the event: 202, and the licence is bought once", async () => {
    const { sb, bridge } = pair();
    const run = await trigger(["created", "--service-id", triggered, "--product-id", "12", "--ip", "203.0.113.77", "--id", webhookId]);
    expect(run.code, run.stderr).toBe(0);
    const out = run.json<TriggerJson>();
    expect(out).toEqual({ status: 202, webhook_id: webhookId, response: { event_id: expect.any(String), status: "accepted" } });
    firstEventId = out.response.event_id;

    const svc = await waitStatus(bridge, triggered, "active");
    expect(svc).toMatchObject({ product_id: "12", ip: "203.0.113.77", billing_cycle: "monthly", customer_email: "customer@example.com" });
    expect(sb.sandbox.ledger().filter((c) => c.ip === "203.0.113.77")).toEqual([
      expect.objectContaining({ op: "register", type: "cpanel", ip: "203.0.113.77", months: 1 }),
    ]);
  });

  it("trigger with the same --id is answered 200 duplicate and buys nothing more", async () => {
    const { sb } = pair();
    const events = await eventRows();
    const run = await trigger(["created", "--service-id", triggered, "--product-id", "12", "--ip", "203.0.113.77", "--id", webhookId]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json<TriggerJson>()).toEqual({ status: 200, webhook_id: webhookId, response: { event_id: firstEventId, status: "duplicate" } });
    expect(await eventRows()).toBe(events);
    expect(sb.sandbox.ledger().filter((c) => c.ip === "203.0.113.77")).toHaveLength(1);
  });

  // The three refusals are independent of each other (none stores an event), so they run side by side.
  it.concurrent("trigger created with a product not in the catalogue shows the 422 and exits 1", async ({ expect }) => {
    const { bridge } = pair();
    const id = uniqueId("svc");
    const events = await eventRows();
    const run = await trigger(["created", "--service-id", id, "--product-id", "99", "--ip", "203.0.113.79"]);
    expect(run.code).toBe(1);
    const out = run.json<TriggerJson>();
    expect(out.status).toBe(422);
    expect(out.response).toEqual({
      error: "Validation error",
      code: "validation",
      errors: { "service.product_id": [expect.stringContaining('unknown product "99"')] } });
    expect(lines(run.stderr)).toEqual(["license-bridge: the instance refused the event (HTTP 422)"]);
    expect(await bridge.service.services.get(id)).toBeUndefined();
    expect(await eventRows()).toBe(events);
  });

  it.concurrent("trigger ip_changed without --new-ip is a usage error naming changes.ip, and nothing is sent", async ({ expect }) => {
    const { sb } = pair();
    const events = await eventRows();
    const requests = sb.sandbox.requests().length;
    const run = await trigger(["ip_changed", "--service-id", triggered]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("the event would be rejected:");
    expect(run.stderr).toContain("changes.ip: is required for service.ip_changed");
    expect(await eventRows()).toBe(events);
    expect(sb.sandbox.requests()).toHaveLength(requests);
  });

  it.concurrent("trigger against a port nobody listens on exits 1 with cannot reach", async ({ expect }) => {
    const port = await freePort();
    const run = await runCli(
      ["trigger", "created", "--service-id", uniqueId("svc"), "--product-id", "12", "--ip", "203.0.113.80", "--url", `http://127.0.0.1:${port}`, "--json"],
      env,
    );
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(lines(run.stderr)).toEqual([expect.stringMatching(new RegExp(`^license-bridge: cannot reach http://127\\.0\\.0\\.1:${port}: `))]);
  });

  it("renew --due queues the paid licence due within RENEWAL_LEAD_DAYS; a second run finds it already queued", async () => {
    const { sb, bridge } = pair();
    const nextDue = new Date(Date.now() + 365 * DAY_MS).toISOString().slice(0, 10);
    const event = createdEvent({ product_id: "12", ip: "203.0.113.78", next_due_date: nextDue });
    expect((await bridge.send(event)).status).toBe(202);
    const svc = await waitStatus(bridge, event.service.id, "active");
    expect(svc.paid_until).toBe(Date.parse(nextDue));
    const term = svc.expires_at!;
    // No balance, so the running bridge's renewal blocks and the term stays due for the second run.
    sb.sandbox.setBalance(0);

    const renewEnv = { ...env, RENEWAL_LEAD_DAYS: "40" };
    const first = await runCli(["renew", "--due", "--json"], renewEnv);
    expect(first.code, first.stderr).toBe(0);
    const out = first.json<RenewJson>();
    // The licence bought by `trigger` has no next_due_date: paid only for its term, so not due.
    expect(out).toEqual({ queued: [{ service_id: event.service.id, term_end: new Date(term).toISOString(), job_id: expect.any(Number) }], already_queued: 0 });
    const jobId = out.queued[0]!.job_id;
    expect(await bridge.service.queue.get(jobId)).toMatchObject({ kind: "renew", serviceId: event.service.id, payload: { term_end: term } });
    await waitFor(async () => (await bridge.service.queue.get(jobId))?.state === "blocked", 10_000, "the renewal to block on the balance");

    const second = await runCli(["renew", "--due", "--json"], renewEnv);
    expect(second.code, second.stderr).toBe(0);
    expect(second.json<RenewJson>()).toEqual({ queued: [], already_queued: 1 });
    expect((await bridge.service.queue.list({ serviceId: event.service.id })).filter((j) => j.kind === "renew")).toHaveLength(1);

    // The queued job is the one the running bridge renews with, once the balance is back.
    sb.sandbox.setBalance(1000);
    await bridge.service.queue.retry(jobId);
    await waitFor(async () => (await bridge.service.queue.get(jobId))?.state === "succeeded", 10_000, "the renewal to succeed");
    expect(sb.sandbox.ledger().filter((c) => c.ip === "203.0.113.78").map((c) => c.op)).toEqual(["register", "renew"]);
    expect((await bridge.service.services.get(event.service.id))!.expires_at).toBeGreaterThan(term);
  });

  it("renew without --due is a usage error and queues nothing", async () => {
    const { bridge } = pair();
    const jobs = (await bridge.service.queue.list()).length;
    const run = await runCli(["renew", "--json"], { ...env, RENEWAL_LEAD_DAYS: "40" });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(lines(run.stderr)).toEqual(["license-bridge: say --due to queue the renewals that are due"]);
    expect(await bridge.service.queue.list()).toHaveLength(jobs);
  });
});

describe("migrate", () => {
  let sb: TestSandbox;
  let dir: string;
  let env: Record<string, string>;
  let dbPath: string;
  const migrations = readMigrations();
  const codeVersion = migrations.at(-1)!.id;

  /** What the file records: its version and what the code knows beyond it. */
  const recorded = () => readStoreOf(env, (store) => store.migrationStatus());

  beforeAll(async () => {
    sb = await startTestSandbox();
    dir = mkdtempSync(join(tmpdir(), "lb-cli-migrate-"));
    env = await testBridgeEnv(sb.running, dir);
    dbPath = databaseLabel(env);
  });

  afterAll(async () => {
    await sb?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("--status on a fresh database shows every migration pending", async () => {
    const run = await runCli(["migrate", "--status", "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toEqual({ database: dbPath, database_version: 0, code_version: codeVersion, pending: migrations.map((m) => m.id) });
  });

  it("applies every migration, then nothing on a second run", async () => {
    const first = await runCli(["migrate", "--json"], env);
    expect(first.code, first.stderr).toBe(0);
    const all = migrations.map((m) => ({ id: m.id, name: m.name }));
    expect(all.length).toBeGreaterThanOrEqual(3);
    expect(first.json()).toEqual({ database: dbPath, applied: all });
    expect(await recorded()).toEqual({ databaseVersion: codeVersion, codeVersion, pending: [] });

    const second = await runCli(["migrate", "--json"], env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.json()).toEqual({ database: dbPath, applied: [] });
    expect(await recorded()).toEqual({ databaseVersion: codeVersion, codeVersion, pending: [] });

    const status = await runCli(["migrate", "--status", "--json"], env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.json()).toEqual({ database: dbPath, database_version: codeVersion, code_version: codeVersion, pending: [] });
  });

  it("refuses a database newer than the code with one line and exit 1, leaving it untouched", async () => {
    expect(await migrateBeyondCodeOf(env)).toBe(codeVersion + 1);
    const before = await recorded();
    expect(before.databaseVersion).toBe(codeVersion + 1);

    const [run, status] = await Promise.all([runCli(["migrate", "--json"], env), runCli(["migrate", "--status", "--json"], env)]);
    const expected = `license-bridge: the database is at migration ${codeVersion + 1} but this code only knows up to ${codeVersion}; run the newer release, or restore a backup taken before the upgrade`;
    for (const r of [run, status]) {
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(lines(r.stderr)).toEqual([expected]);
    }
    expect(await recorded()).toEqual(before);
  });
});

describe("sub-resellers and reseller commands against the sandbox", () => {
  let sb: TestSandbox;
  let dir: string;
  let env: Record<string, string>;
  const password = "initial-pass-0123";
  let subId: string;

  beforeAll(async () => {
    sb = await startTestSandbox({ balance: 500 });
    dir = mkdtempSync(join(tmpdir(), "lb-cli-reseller-"));
    env = { ...(await testBridgeEnv(sb.running, dir)), RESELLER_ADMIN_TOKEN: DEFAULT_SANDBOX_TOKENS.admin, SUB_PASSWORD: password };
  });

  afterAll(async () => {
    await sb?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const calls = (op: string) => sb.sandbox.requests().filter((r) => r.op === op);

  it("sub-resellers create takes the password from the named variable and prints the new id", async () => {
    const run = await runCli(
      ["sub-resellers", "create", "--name", "Sub One", "--email", "sub1@example.com", "--password-env", "SUB_PASSWORD", "--commission-rate", "5", "--json"],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    const out = run.json<{ id: string; raw: unknown }>();
    expect(out.id).toMatch(/^\d+$/);
    subId = out.id;
    expect(run.stdout).not.toContain(password);
    expect(calls("sub-reseller-create")).toEqual([
      expect.objectContaining({
        status: 200,
        params: expect.objectContaining({ name: "Sub One", email: "sub1@example.com", password, role: "sub_reseller", commission_rate: 5 }) }),
    ]);
  });

  it("sub-resellers list --json lists it", async () => {
    const run = await runCli(["sub-resellers", "list", "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toEqual({
      sub_resellers: [{ id: Number(subId), name: "Sub One", email: "sub1@example.com", role: "sub_reseller", commission_rate: 5, balance: 0 }] });
  });

  it("sub-resellers credit moves the amount from the reseller's balance to the sub-reseller", async () => {
    const before = sb.sandbox.balance();
    const run = await runCli(["sub-resellers", "credit", subId, "25", "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toEqual({ id: subId, credited: 25, balance: 25 });
    expect(sb.sandbox.balance()).toBe(before - 25);
  });

  it("reseller balance 1 --json (admin token) answers the sandbox's balance", async () => {
    const run = await runCli(["reseller", "balance", "1", "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toEqual({ id: "1", balance: sb.sandbox.balance() });
    expect(sb.sandbox.balance()).toBe(475);
  });

  it("reseller balance without an id reads the bridge's own account, RESELLER_ACCOUNT_ID", async () => {
    const asked = calls("admin-reseller-balance").length;
    const run = await runCli(["reseller", "balance", "--json"], { ...env, RESELLER_ACCOUNT_ID: "1" });
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toEqual({ id: "1", balance: sb.sandbox.balance() });
    expect(calls("admin-reseller-balance").slice(asked)).toEqual([expect.objectContaining({ status: 200, params: { id: "1" } })]);
  });

  it("reseller balance without an id or RESELLER_ACCOUNT_ID is a usage error naming both, and calls nothing", async () => {
    const asked = calls("admin-reseller-balance").length;
    const run = await runCli(["reseller", "balance"], env);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(lines(run.stderr)).toEqual(["license-bridge: give the account id (reseller balance <id>), or set RESELLER_ACCOUNT_ID to the reseller's own account"]);
    expect(calls("admin-reseller-balance")).toHaveLength(asked);
  });

  it("reseller credit 1 50 --description adds 50 to the balance", async () => {
    const before = sb.sandbox.balance();
    const run = await runCli(["reseller", "credit", "1", "50", "--description", "test"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(`credited 50 to reseller 1; balance ${before + 50}`);
    expect(sb.sandbox.balance()).toBe(before + 50);
    expect(calls("admin-reseller-credit")).toEqual([expect.objectContaining({ status: 200, params: expect.objectContaining({ amount: 50, description: "test" }) })]);
  });

  it("reseller create prints the new id (and its token once); the account exists with its opening balance", async () => {
    const run = await runCli(
      ["reseller", "create", "--name", "Res Two", "--email", "res2@example.com", "--domain", "res2.example.com", "--password-env", "SUB_PASSWORD", "--balance", "40"],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    const m = /^created reseller (\d+)\napi token \(shown once\): (\S+)$/.exec(run.stdout.trim());
    expect(m, run.stdout).not.toBeNull();
    const res = await fetch(`${sb.running.apiUrl}/admin/reseller/${m![1]}/balance`, { headers: { authorization: `Bearer ${DEFAULT_SANDBOX_TOKENS.admin}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ success: true, data: { id: Number(m![1]), balance: 40 } });
  });

  it.concurrent("reseller balance without RESELLER_ADMIN_TOKEN uses the reseller token and fails: forbidden", async ({ expect }) => {
    const { RESELLER_ADMIN_TOKEN: _admin, ...withoutAdmin } = env;
    const run = await runCli(["reseller", "balance", "1", "--json"], withoutAdmin);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(lines(run.stderr)).toEqual([expect.stringMatching(/^license-bridge: .*forbidden/i)]);
    expect(calls("admin-reseller-balance").at(-1)).toMatchObject({ status: 403 });
  });

  it.concurrent("sub-resellers credit with a negative amount is a usage error and calls nothing", async ({ expect }) => {
    const credits = calls("sub-reseller-credit").length;
    const run = await runCli(["sub-resellers", "credit", subId, "-5"], env);
    expect(run.code).toBe(2);
    expect(lines(run.stderr)).toEqual([`license-bridge: amount ${AMOUNT_RULE}, got "-5"`]);
    expect(calls("sub-reseller-credit")).toHaveLength(credits);
  });

  it("reseller credit 1 10.5 credits exactly 10.5", async () => {
    const before = sb.sandbox.balance();
    const run = await runCli(["reseller", "credit", "1", "10.5", "--description", "decimal", "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toEqual({ id: "1", credited: 10.5, balance: before + 10.5 });
  });

  /** Numbers that Number() reads (0x10 is 16, 1e1 is 10) but an operator never meant. */
  const refused: [string, string[], string, string][] = [
    ["reseller credit, amount 0x10", ["reseller", "credit", "1", "0x10", "--description", "x"], "amount", "0x10"],
    ["reseller credit, amount 1e1", ["reseller", "credit", "1", "1e1", "--description", "x"], "amount", "1e1"],
    ["reseller credit, amount 0", ["reseller", "credit", "1", "0", "--description", "x"], "amount", "0"],
    ["reseller credit, id 0x1", ["reseller", "credit", "0x1", "10", "--description", "x"], "id", "0x1"],
    ["reseller balance, id 1e0", ["reseller", "balance", "1e0"], "id", "1e0"],
    ["sub-resellers credit, amount 0x10", ["sub-resellers", "credit", "2", "0x10"], "amount", "0x10"],
    ["sub-resellers credit, amount ' 5'", ["sub-resellers", "credit", "2", " 5"], "amount", " 5"],
    ["sub-resellers credit, id 02", ["sub-resellers", "credit", "02", "5"], "id", "02"],
    ["reseller create, --balance 0x10", ["reseller", "create", "--name", "R", "--email", "r@example.com", "--domain", "r.example", "--password-env", "SUB_PASSWORD", "--balance", "0x10"], "--balance", "0x10"],
    ["reseller create, --commission 1e1", ["reseller", "create", "--name", "R", "--email", "r@example.com", "--domain", "r.example", "--password-env", "SUB_PASSWORD", "--commission", "1e1"], "--commission", "1e1"],
    ["sub-resellers create, --commission-rate 0x5", ["sub-resellers", "create", "--name", "S", "--email", "s@example.com", "--password-env", "SUB_PASSWORD", "--commission-rate", "0x5"], "--commission-rate", "0x5"],
  ];
  it("amounts and ids that are not plain decimal are usage errors naming the argument, and call nothing upstream", async () => {
    const before = sb.sandbox.requests().length;
    const runs = await Promise.all(refused.map(([, args]) => runCli(args, env)));
    runs.forEach((run, i) => {
      const [what, , name, value] = refused[i]!;
      expect(run.code, what).toBe(2);
      expect(lines(run.stderr), what).toEqual([expect.stringMatching(new RegExp(`^license-bridge: ${name} must be .*, got "${value}"$`))]);
    });
    expect(sb.sandbox.requests().slice(before)).toEqual([]);
  });
});

describe("sandbox command", () => {
  const BIN = resolve(import.meta.dirname, "../../bin/license-bridge.mjs");
  const baseEnv = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };

  it.concurrent("runs the reseller sandbox alone, with both interfaces, until SIGTERM (exit 0)", async ({ expect }) => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const proc = spawn(process.execPath, [BIN, "sandbox"], {
      env: { ...baseEnv, SANDBOX_PORT: String(port), SANDBOX_BALANCE: "123", LOG_LEVEL: "silent" },
      stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    proc.stdout.on("data", (d: Buffer) => (output += d.toString()));
    proc.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => proc.once("exit", (code, signal) => r({ code, signal })));
    const admin = { authorization: `Bearer ${DEFAULT_SANDBOX_TOKENS.admin}` };
    try {
      await waitFor(
        async () => {
          if (proc.exitCode !== null) throw new Error(`sandbox exited with ${proc.exitCode}: ${output}`);
          const res = await fetch(`${url}/_sandbox/balance`, { headers: admin });
          return res.ok && ((await res.json()) as { balance: number }).balance === 123;
        },
        15_000,
        "the sandbox to answer its balance",
      );

      const v1 = await fetch(`${url}/api/v1/license/register`, {
        method: "POST",
        headers: { authorization: `Bearer ${DEFAULT_SANDBOX_TOKENS.reseller}`, "content-type": "application/json" },
        body: JSON.stringify({ ip: "203.0.113.90", type: "cpanel", billingcycle: 1 }) });
      expect(v1.status).toBe(200);
      expect(await v1.json()).toMatchObject({ success: true });

      const query = new URLSearchParams({ token: DEFAULT_SANDBOX_TOKENS.legacy, ip: "203.0.113.91", type: "plesk", billingcycle: "1" });
      const v2 = await fetch(`${url}/rc/license.php?${query}`);
      expect(v2.status).toBe(200);
      expect(await v2.json()).toEqual({ ok: "True", message: "License registered" });

      const ledger = (await (await fetch(`${url}/_sandbox/ledger`, { headers: admin })).json()) as { charges: { via: string; op: string; ip: string; type: string }[] };
      expect(ledger.charges.map(({ via, op, ip, type }) => ({ via, op, ip, type }))).toEqual([
        { via: "v1", op: "register", ip: "203.0.113.90", type: "cpanel" },
        { via: "v2", op: "register", ip: "203.0.113.91", type: "plesk" },
      ]);
      expect(await (await fetch(`${url}/_sandbox/balance`, { headers: admin })).json()).toEqual({ balance: 123 - 15 - 12 });

      proc.kill("SIGTERM");
      expect(await exited, output).toEqual({ code: 0, signal: null });
    } finally {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
      await exited;
    }
  });

  /**
   * `license-bridge sandbox <args>` as its own process, on a free port; `listening` resolves with
   * the line it logs once it listens (JSON), or rejects when it exits first.
   */
  async function spawnSandbox(args: string[]) {
    const port = await freePort();
    const proc = spawn(process.execPath, [BIN, "sandbox", ...args], { env: { ...baseEnv, SANDBOX_PORT: String(port), LOG_LEVEL: "info" }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => proc.once("exit", (code, signal) => r({ code, signal })));
    const listening = new Promise<Record<string, unknown>>((resolveLine, reject) => {
      const seen = (d: Buffer) => {
        output += d.toString();
        const line = output.split("\n").find((l) => l.includes("sandbox listening"));
        if (line) resolveLine(JSON.parse(line) as Record<string, unknown>);
      };
      proc.stdout.on("data", seen);
      proc.stderr.on("data", seen);
      void exited.then(({ code }) => reject(new Error(`sandbox exited with ${code}: ${output}`)));
    });
    return {
      url: `http://127.0.0.1:${port}`,
      listening,
      output: () => output,
      /** SIGTERM, and how it ended. */
      stop: () => {
        proc.kill("SIGTERM");
        return exited;
      },
      /** For a test that failed before stop(): nothing outlives it. */
      kill: async () => {
        if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
        await exited;
      },
    };
  }

  it.concurrent("--provider manage2 runs cPanel Manage2's sandbox alone, printing its credentials, until SIGTERM (exit 0)", async ({ expect }) => {
    const sb = await spawnSandbox(["--provider", "manage2"]);
    try {
      const started = await sb.listening;
      expect(started).toMatchObject({ url: sb.url, credentials: { MANAGE2_URL: sb.url, MANAGE2_USER: expect.any(String), MANAGE2_PASSWORD: expect.any(String) } });
      const { MANAGE2_USER: user, MANAGE2_PASSWORD: password } = started.credentials as { MANAGE2_USER: string; MANAGE2_PASSWORD: string };
      const add = (authorization?: string) =>
        fetch(`${sb.url}/XMLlicenseAdd.cgi`, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", ...(authorization ? { authorization } : {}) },
          body: new URLSearchParams({ output: "json", ip: "203.0.113.92", packageid: "12345", reactivateok: "0", legal: "1" }),
        });

      expect((await add()).status).toBe(401);
      const added = await add(`Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`);
      expect(added.status).toBe(200);
      expect(await added.json()).toMatchObject({ status: 1, reason: expect.stringMatching(/^Activated .* license on 203\.0\.113\.92/) });
      const ledger = (await (await fetch(`${sb.url}/_sandbox/ledger`, { headers: { authorization: `Bearer ${DEFAULT_SANDBOX_TOKENS.admin}` } })).json()) as { charges: { op: string; ip: string; packageid: number }[] };
      expect(ledger.charges.map(({ op, ip, packageid }) => ({ op, ip, packageid }))).toEqual([{ op: "add", ip: "203.0.113.92", packageid: 12345 }]);

      expect(await sb.stop(), sb.output()).toEqual({ code: 0, signal: null });
    } finally {
      await sb.kill();
    }
  });

  it.concurrent("--provider cln runs CloudLinux CLN's sandbox alone, printing its credentials, until SIGTERM (exit 0)", async ({ expect }) => {
    const sb = await spawnSandbox(["--provider", "cln"]);
    try {
      const started = await sb.listening;
      expect(started).toMatchObject({ url: sb.url, credentials: { CLN_URL: sb.url, CLN_LOGIN: expect.any(String), CLN_SECRET_KEY: expect.any(String) } });
      const { CLN_LOGIN: login, CLN_SECRET_KEY: secretKey } = started.credentials as { CLN_LOGIN: string; CLN_SECRET_KEY: string };
      // CLN's token, computed here as its REST API describes it: login|timestamp|sha1(secret key + timestamp).
      const token = (key: string) => {
        const timestamp = String(Math.floor(Date.now() / 1000));
        return `${login}|${timestamp}|${createHash("sha1").update(key + timestamp).digest("hex")}`;
      };
      const register = async (key: string) => (await fetch(`${sb.url}/api/ipl/register.json?${new URLSearchParams({ ip: "203.0.113.93", type: "1", token: token(key) })}`)).json();

      expect(await register("not-the-secret-key")).toMatchObject({ success: false });
      expect(await register(secretKey)).toMatchObject({ success: true, data: { ip: "203.0.113.93", type: 1 } });
      const ledger = (await (await fetch(`${sb.url}/_sandbox/ledger`, { headers: { authorization: `Bearer ${DEFAULT_CLN_SANDBOX_ADMIN_TOKEN}` } })).json()) as { purchases: { op: string; ip: string; type: number }[] };
      expect(ledger.purchases.map(({ op, ip, type }) => ({ op, ip, type }))).toEqual([{ op: "register", ip: "203.0.113.93", type: 1 }]);

      expect(await sb.stop(), sb.output()).toEqual({ code: 0, signal: null });
    } finally {
      await sb.kill();
    }
  });

  it.concurrent("a provider it has no sandbox of is a usage error (exit 2) naming the choices", async ({ expect }) => {
    const run = await runCli(["sandbox", "--provider", "plesk"], {});
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/'plesk' is invalid\. Allowed choices are reseller, manage2, cln\./);
  });

  it.concurrent("--help describes --provider and its choices", async ({ expect }) => {
    const run = await runCli(["sandbox", "--help"], {});
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/--provider <name>[\s\S]*"reseller", "manage2", "cln"[\s\S]*default: "reseller"/);
    expect(run.stdout).toMatch(/MANAGE2_URL, MANAGE2_USER, MANAGE2_PASSWORD/);
  });

  it.concurrent("a SANDBOX_PORT that is not a number ends with exit 78 and one line naming it", async ({ expect }) => {
    const run = await runCli(["sandbox"], { SANDBOX_PORT: "abc" });
    expect(run.code).toBe(78);
    expect(run.stdout).toBe("");
    expect(lines(run.stderr)).toEqual([expect.stringMatching(/^license-bridge: invalid sandbox environment: SANDBOX_PORT: /)]);
  });
});
