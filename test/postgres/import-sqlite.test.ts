import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { manualClock, systemClock, type Clock } from "../../src/clock.js";
import { loadConfig } from "../../src/config/load.js";
import { silentLogger } from "../../src/log/logger.js";
import { startService, type RunningService } from "../../src/compose/service.js";
import { importSqlite } from "../../src/store/import-sqlite.js";
import { databaseLocation } from "../../src/store/open.js";
import { openDatabase } from "../../src/store/sqlite/database.js";
import { migrate, readMigrations } from "../../src/store/sqlite/migrations.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import type { AdoptedService, HistoryRow, Store } from "../../src/store/store.js";
import { runCli, type CliRun } from "../cli/helpers.js";
import { bridgeEnv, createdEvent, idle, serviceEvent, startTestSandbox, type TestSandbox } from "../helpers/bridge.js";
import { sendTo } from "../helpers/e2e-child.js";
import { freshDatabase } from "../helpers/postgres.js";
import { startTestSmtp, type TestSmtp } from "../helpers/smtp.js";
import { holdWriteLock, readStore, type WriteLock } from "../helpers/sqlite.js";
import { tempDirs } from "../helpers/temp-dirs.js";
import { readStoreOf } from "../helpers/test-store.js";
import { waitFor } from "../helpers/wait.js";

/**
 * `license-bridge import-sqlite <file>`: an instance moves from SQLite to PostgreSQL with its
 * state. Run as the CLI (in this process) between a bridge on SQLite (stopped) and a bridge on PostgreSQL
 * (started on the copy): everything the old instance knew, the new one knows and acts on.
 */

const DAY = 86_400_000;
const inDays = (days: number) => new Date(Date.now() + days * DAY).toISOString().slice(0, 10);
/** The password the target's URL carries (the scratch cluster trusts local connections and ignores it); it must show nowhere. */
const PASSWORD = "Imp0rt-s3cret-pw";

interface Bridge {
  service: RunningService;
  url: string;
  close(): Promise<void>;
}

/** A bridge in this process on exactly `env` (bridgeEnv is SQLite unless `env` names a DATABASE_URL). */
async function startBridge(env: Record<string, string>, clock?: Clock): Promise<Bridge> {
  const config = loadConfig({ env, cwd: process.cwd() });
  const service = await startService({ config, logger: silentLogger(), clock, pollMs: 50, baseDelayMs: 40, shutdownGraceMs: 2000 });
  return { service, url: service.url, close: async () => void (await service.close()) };
}

/** A fresh database of the run's cluster, its URL with a password in it. */
async function targetDatabase(): Promise<string> {
  const u = new URL((await freshDatabase()).url);
  u.password = PASSWORD;
  return u.toString();
}

const byId = <T extends { id: number }>(rows: T[]) => [...rows].sort((a, b) => a.id - b.id);
const maxOf = (ids: number[]) => ids.reduce((a, b) => Math.max(a, b), 0);

function expectNoPassword(...runs: CliRun[]) {
  for (const run of runs) {
    expect(run.stdout).not.toContain(PASSWORD);
    expect(run.stderr).not.toContain(PASSWORD);
  }
}

/** Everything the stopped SQLite bridge left, as the Store reads it. */
async function snapshot(store: Store, serviceIds: string[]) {
  const services = await store.services.list();
  const history: Record<string, HistoryRow[]> = {};
  for (const id of serviceIds) history[id] = await store.services.history(id);
  // The counters of migration 008 (the job gauge, the listings' totals): rebuilt by the target from the rows copied.
  const totals = { jobs: await store.jobs.counts(), licenses: (await store.services.page({ limit: 1 })).total, active: (await store.services.page({ limit: 1, status: "active" })).total };
  return { services, history, jobs: byId(await store.jobs.list()), counts: await store.counts(), alerts: await store.alerts.open(), totals, audit: (await store.audit.list()).entries };
}

describe("license-bridge import-sqlite", () => {
  let sb: TestSandbox | undefined;
  let smtp: TestSmtp | undefined;
  const bridges: Bridge[] = [];
  const locks: WriteLock[] = [];
  const dirs = tempDirs("lb-import-");
  const tempDir = () => dirs.make();

  afterEach(async () => {
    for (const lock of locks.splice(0)) lock.release();
    for (const b of bridges.splice(0)) await b.close();
    await sb?.close();
    await smtp?.close();
    sb = smtp = undefined;
    dirs.removeAll();
  });

  const start = async (env: Record<string, string>, clock?: Clock) => {
    const b = await startBridge(env, clock);
    bridges.push(b);
    return b;
  };
  const stop = async (b: Bridge) => {
    bridges.splice(bridges.indexOf(b), 1);
    await b.close();
  };

  /**
   * A SQLite bridge that has run for a while, then stopped: one active licence (install mail
   * sent), one suspended, one whose registration is blocked for want of balance (an operator
   * alert open), and a webhook-id the panel may deliver again.
   */
  async function oldInstance() {
    sb = await startTestSandbox();
    smtp = await startTestSmtp();
    const dir = tempDir();
    const env = bridgeEnv(sb.running, dir, { SMTP_URL: smtp.url, OPERATOR_EMAIL: "ops@example.com" });
    const bridge = await start(env);
    const active = { id: "imp-msg-active", event: createdEvent({ id: "imp-active", ip: "198.18.200.1", email: "ann@example.com" }) };
    expect((await sendTo(bridge.url, active.event, active.id)).status).toBe(202);
    expect((await sendTo(bridge.url, createdEvent({ id: "imp-susp", ip: "198.18.200.2" }))).status).toBe(202);
    await waitFor(async () => (await bridge.service.services.get("imp-susp"))?.status === "active", 10_000, "imp-susp active");
    expect((await sendTo(bridge.url, serviceEvent("service.suspended", "imp-susp"))).status).toBe(202);
    await waitFor(async () => (await bridge.service.services.get("imp-susp"))?.status === "suspended", 10_000, "imp-susp suspended");
    sb.sandbox.setBalance(0);
    expect((await sendTo(bridge.url, createdEvent({ id: "imp-blocked", ip: "198.18.200.3" }))).status).toBe(202);
    await waitFor(async () => (await bridge.service.queue.list({ serviceId: "imp-blocked", state: "blocked" })).length === 1, 10_000, "the blocked registration");
    await waitFor(async () => (await bridge.service.services.get("imp-active"))?.status === "active", 10_000, "imp-active active");
    await waitFor(() => idle(bridge.service), 10_000, "the queue to settle");
    await waitFor(() => smtp!.messages.length >= 2, 10_000, "the install mails and the alert");
    await waitFor(() => idle(bridge.service), 10_000, "the queue to settle");
    // An operator acted (and was refused): the audit trail moves too.
    await bridge.service.store.audit.record({ actor: "alice", action: "job.retry", job_id: 1, service_id: "imp-active", outcome: "refused", detail: "the job is succeeded" });
    await stop(bridge);
    return { env, file: env.DATABASE_PATH!, active };
  }

  it("copies every row into an empty PostgreSQL database, and a bridge on it carries on where the old one stopped", { timeout: 120_000 }, async () => {
    const old = await oldInstance();
    const serviceIds = ["imp-active", "imp-susp", "imp-blocked"];
    const before = await readStore(old.file, async (store) => {
      const s = await snapshot(store, serviceIds);
      const order = s.services.find((r) => r.service_id === "imp-active")!.order_event_id!;
      return { ...s, installMail: await store.mails.get(`install:${order}`) };
    });
    expect(before.counts.mails, "the old instance sent mail").toBeGreaterThan(0);
    expect(before.alerts.length, "and has an alert open").toBeGreaterThan(0);
    expect(before.installMail).toBeDefined();
    const blocked = before.jobs.find((j) => j.serviceId === "imp-blocked" && j.state === "blocked")!;
    expect(blocked).toBeDefined();

    const databaseUrl = await targetDatabase();
    const newEnv = bridgeEnv(sb!.running, tempDir(), { DATABASE_URL: databaseUrl, SMTP_URL: smtp!.url, OPERATOR_EMAIL: "ops@example.com", RENEWAL_LEAD_DAYS: "40" });
    // The operator's environment: the old instance's, plus DATABASE_URL.
    const cliEnv = { ...old.env, DATABASE_URL: databaseUrl };
    const run = await runCli(["import-sqlite", old.file, "--json"], cliEnv);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toEqual({
      source: old.file,
      target: databaseLocation({ DATABASE_URL: databaseUrl, DATABASE_PATH: old.file }),
      copied: { ...before.counts, alerts: before.alerts.length, audit: before.audit.length, webhook_keys: 0 },
    });

    // Row for row what SQLite held: services, their histories (events in the same order, same ids), jobs, mail, alerts.
    const after = await readStoreOf(newEnv, async (store) => ({
      ...(await snapshot(store, serviceIds)),
      installMail: await store.mails.get(`install:${before.installMail!.event_id}`),
      status: await store.migrationStatus(),
    }));
    expect(after.status.pending, "the target was migrated").toEqual([]);
    expect(after.services).toEqual(before.services);
    expect(after.history).toEqual(before.history);
    expect(after.jobs).toEqual(before.jobs);
    expect(after.counts).toEqual(before.counts);
    expect(after.totals).toEqual(before.totals);
    expect(after.totals.licenses).toBe(before.services.length);
    expect(after.alerts).toEqual(before.alerts);
    expect(after.audit).toEqual(before.audit);
    expect(before.audit).toHaveLength(1);
    expect(after.installMail).toEqual(before.installMail);
    const importedJobIds = maxOf(before.jobs.map((j) => j.id));
    const importedHistory = Object.values(before.history).flat();
    const importedEventSeq = maxOf(importedHistory.filter((h) => h.action.startsWith("received ")).map((h) => h.id));
    const importedHistoryIds = maxOf(importedHistory.filter((h) => !h.action.startsWith("received ")).map((h) => h.id));

    const bridge = await start(newEnv);
    // The panel delivers the first order again: the same event, already seen.
    const again = await sendTo(bridge.url, old.active.event, old.active.id);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ status: "duplicate", event_id: before.history["imp-active"]![0]!.event_id });

    // The blocked registration waits for the operator there too; a retry buys it once.
    const listed = await runCli(["jobs", "list", "--state", "blocked", "--json"], newEnv);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json<{ jobs: { id: number }[] }>().jobs.map((j) => j.id)).toContain(blocked.id);
    sb!.sandbox.setBalance(1000);
    const retried = await runCli(["jobs", "retry", String(blocked.id), "--json"], newEnv);
    expect(retried.code, retried.stderr).toBe(0);
    // Its audit entry is numbered after the imported one.
    const trail = (await bridge.service.store.audit.list()).entries;
    expect(trail.map((e) => [e.action, e.job_id, e.outcome])).toEqual([["job.retry", blocked.id, "ok"], ["job.retry", 1, "refused"]]);
    expect(trail[0]!.id).toBeGreaterThan(before.audit[0]!.id);
    await waitFor(async () => (await bridge.service.services.get("imp-blocked"))?.status === "active", 10_000, "imp-blocked active");
    await waitFor(() => idle(bridge.service), 10_000, "the queue to settle");
    expect(sb!.sandbox.ledger().filter((c) => c.op === "register" && c.ip === "198.18.200.3")).toHaveLength(1);
    expect((await bridge.service.queue.get(blocked.id))?.state).toBe("succeeded");

    // A payment for the imported licence (the balance is back): accepted, and renewed exactly once.
    const renewed = await sendTo(bridge.url, serviceEvent("service.renewed", "imp-active", { service: { next_due_date: inDays(90) } }));
    expect(renewed.status).toBe(202);
    const renewals = () => sb!.sandbox.ledger().filter((c) => c.op === "renew" && c.ip === "198.18.200.1");
    await waitFor(() => renewals().length === 1, 10_000, "the renewal");
    await waitFor(() => idle(bridge.service), 10_000, "the queue to settle");
    expect(renewals()).toHaveLength(1);

    // New rows are numbered after the imported ones: jobs, events (seq) and history.
    expect((await sendTo(bridge.url, createdEvent({ id: "imp-new", ip: "198.18.200.4" }))).status).toBe(202);
    await waitFor(async () => (await bridge.service.services.get("imp-new"))?.status === "active", 10_000, "imp-new active");
    await waitFor(() => idle(bridge.service), 10_000, "the queue to settle");
    const newJobs = await bridge.service.queue.list({ serviceId: "imp-new" });
    expect(newJobs.length).toBeGreaterThan(0);
    expect(Math.min(...newJobs.map((j) => j.id))).toBeGreaterThan(importedJobIds);
    const newHistory = await bridge.service.services.history("imp-new");
    expect(newHistory[0]!.action).toBe("received service.created");
    expect(newHistory[0]!.id).toBeGreaterThan(importedEventSeq);
    const newEntries = newHistory.filter((h) => !h.action.startsWith("received "));
    expect(newEntries.length).toBeGreaterThan(0);
    expect(Math.min(...newEntries.map((h) => h.id))).toBeGreaterThan(importedHistoryIds);

    // A second import into the database now in use is refused, and copies nothing.
    const counts = await bridge.service.store.counts();
    const second = await runCli(["import-sqlite", old.file, "--json"], cliEnv);
    expect(second.code).toBe(1);
    expect(second.stdout).toBe("");
    expect(second.stderr).toMatch(/is not empty/);
    expect(second.stderr).toMatch(/nothing was copied/);
    expect(await bridge.service.store.counts()).toEqual(counts);

    // For people: a table of what was copied.
    const human = await runCli(["import-sqlite", old.file], { ...old.env, DATABASE_URL: await targetDatabase() });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^TABLE\s+ROWS$/m);
    expect(human.stdout).toMatch(new RegExp(`^services\\s+${before.counts.services}$`, "m"));
    expectNoPassword(run, listed, retried, second, human);
  });

  it("copies the keys a prune kept of a terminated service's events: the panel's old delivery is a duplicate on PostgreSQL too", { timeout: 60_000 }, async () => {
    sb = await startTestSandbox();
    const clock = manualClock(Date.now());
    const env = bridgeEnv(sb.running, tempDir(), { TERMINATED_RETENTION_DAYS: "60" });
    const bridge = await start(env, clock);
    const order = createdEvent({ id: "imp-pruned", ip: "198.18.200.9" });
    const first = await sendTo(bridge.url, order, "imp-msg-pruned");
    expect(first.status).toBe(202);
    await waitFor(async () => (await bridge.service.services.get("imp-pruned"))?.status === "active", 10_000, "imp-pruned active");
    expect((await sendTo(bridge.url, serviceEvent("service.terminated", "imp-pruned"))).status).toBe(202);
    await waitFor(async () => (await bridge.service.services.get("imp-pruned"))?.status === "terminated", 10_000, "imp-pruned terminated");
    await waitFor(() => idle(bridge.service), 10_000, "the queue to settle");
    clock.advance(61 * DAY);
    expect(await bridge.service.prune()).toMatchObject({ terminated_services: 1 });
    await stop(bridge);

    const databaseUrl = await targetDatabase();
    const run = await runCli(["import-sqlite", env.DATABASE_PATH!, "--json"], { ...env, DATABASE_URL: databaseUrl });
    expect(run.code, run.stderr).toBe(0);
    expect(run.json<{ copied: Record<string, number> }>().copied).toMatchObject({ events: 0, services: 1, webhook_keys: 2 });

    const moved = await start(bridgeEnv(sb.running, tempDir(), { DATABASE_URL: databaseUrl }));
    const again = await sendTo(moved.url, order, "imp-msg-pruned");
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ status: "duplicate", event_id: first.body.event_id });
    await waitFor(() => idle(moved.service), 10_000, "the queue to settle");
    expect(await moved.service.services.get("imp-pruned")).toMatchObject({ status: "terminated" });
    expect(sb.sandbox.ledger().filter((c) => c.ip === "198.18.200.9")).toHaveLength(1);
    expectNoPassword(run);
  });

  it("refuses a source another process has open: a writer holding its lock, or a service still running on it", { timeout: 60_000 }, async () => {
    const old = await oldInstance();
    const databaseUrl = await targetDatabase();
    const env = { ...old.env, DATABASE_URL: databaseUrl };
    const target = { DATABASE_URL: databaseUrl, DATABASE_PATH: old.file };

    const lock = holdWriteLock(old.file);
    locks.push(lock);
    const held = await runCli(["import-sqlite", old.file, "--json"], env);
    lock.release();
    expect(held.code).toBe(1);
    expect(held.stderr).toMatch(/in use by another process/);
    expect(held.stderr).toMatch(/stop the service on that file/);

    // A service idle on the file holds no lock most of the time, and would write after the copy.
    const running = await start(old.env);
    const idleService = await runCli(["import-sqlite", old.file, "--json"], env);
    await stop(running);
    expect(idleService.code).toBe(1);
    expect(idleService.stderr).toMatch(/stop the service on that file/);

    // Nothing reached the target: not even its migrations.
    const status = await readStoreOf(target, (store) => store.migrationStatus());
    expect(status.databaseVersion).toBe(0);
    // Once the file is free, the same command copies it.
    const ok = await runCli(["import-sqlite", old.file, "--json"], env);
    expect(ok.code, ok.stderr).toBe(0);
    expectNoPassword(held, idleService, ok);
  });

  it("refuses without DATABASE_URL, a missing source, a source behind the code's migrations, and an unreachable target, naming no password", async () => {
    const dir = tempDir();
    const file = join(dir, "old.db");
    const env = { DATABASE_PATH: file, LOG_LEVEL: "silent" };
    const db = openDatabase(file);
    migrate(db, readMigrations().slice(0, -1));
    db.close();

    const noUrl = await runCli(["import-sqlite", file], env);
    expect(noUrl.code).toBe(1);
    expect(noUrl.stderr).toMatch(/DATABASE_URL is not set/);

    const databaseUrl = await targetDatabase();
    const behind = await runCli(["import-sqlite", file], { ...env, DATABASE_URL: databaseUrl });
    expect(behind.code).toBe(1);
    expect(behind.stderr).toContain(`run \`DATABASE_PATH=${file} license-bridge migrate\` first`);

    const missing = await runCli(["import-sqlite", join(dir, "nope.db")], { ...env, DATABASE_URL: databaseUrl });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no SQLite database at .*nope\.db/);

    writeFileSync(join(dir, "junk.db"), "not a database, just text that is long enough to have a header".repeat(20));
    const junk = await runCli(["import-sqlite", join(dir, "junk.db")], { ...env, DATABASE_URL: databaseUrl });
    expect(junk.code).toBe(1);
    expect(junk.stderr).toMatch(/not a SQLite database/);

    // Migrated, the same file goes across; a server that is not there is named without the password.
    const up = openDatabase(file);
    migrate(up);
    up.close();
    const unreachable = new URL(databaseUrl);
    unreachable.port = "1";
    const down = await runCli(["import-sqlite", file], { ...env, DATABASE_URL: unreachable.toString() });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/127\.0\.0\.1:1/);
    const ok = await runCli(["import-sqlite", file, "--json"], { ...env, DATABASE_URL: databaseUrl });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.json<{ copied: Record<string, number> }>().copied).toEqual({ events: 0, services: 0, history: 0, jobs: 0, mails: 0, alerts: 0, audit: 0, webhook_keys: 0 });
    expectNoPassword(noUrl, behind, missing, junk, down, ok);
  });

  it("copies each service's provider, what it bought and the provider's id of it, and the totals by provider", async () => {
    const file = join(tempDir(), "old.db");
    const sqlite = openSqliteStore(file, { clock: systemClock });
    await sqlite.migrate();
    const adopted = (serviceId: string, ip: string, over: Partial<AdoptedService>): AdoptedService => ({
      service_id: serviceId,
      product_id: "12",
      kind: "licence",
      type: "cpanel",
      bundle: null,
      variant: null,
      ip,
      billing_cycle: "monthly",
      months: 1,
      status: "active",
      customer_email: null,
      customer_name: null,
      paid_until: null,
      order_event_id: null,
      expires_at: null,
      upstream_variant: null,
      bundle_key: null,
      companions: "[]",
      ...over,
    });
    const book = [
      adopted("imp-reseller", "198.18.202.1", {}),
      adopted("imp-manage2", "198.18.202.2", { provider: "manage2", sku: "12345", upstream_id: "L-4242" }),
      adopted("imp-cln", "198.18.202.3", { provider: "cln", sku: "1", type: "cloudlinux", status: "suspended" }),
    ];
    expect((await sqlite.adoption.insert(book.map((service) => ({ service, history: [] })), () => undefined)).inserted).toHaveLength(3);
    const before = await sqlite.services.list();
    await sqlite.close();

    const databaseUrl = (await freshDatabase()).url;
    expect(await importSqlite(file, databaseUrl, "the test database", { logger: silentLogger() })).toMatchObject({ copied: { services: 3 } });
    const after = await readStoreOf({ DATABASE_URL: databaseUrl, DATABASE_PATH: file }, async (store) => ({
      services: await store.services.list(),
      manage2: (await store.services.page({ provider: "manage2", limit: 10 })).total,
      clnSuspended: (await store.services.page({ provider: "cln", status: "suspended", limit: 10 })).total,
      reseller: (await store.services.page({ provider: "reseller", limit: 10 })).items.map((r) => r.service_id),
    }));
    expect(after.services).toEqual(before);
    expect(after.services.map((r) => [r.service_id, r.provider, r.sku, r.upstream_id])).toEqual([
      ["imp-cln", "cln", "1", null],
      ["imp-manage2", "manage2", "12345", "L-4242"],
      ["imp-reseller", "reseller", null, null],
    ]);
    expect(after).toMatchObject({ manage2: 1, clnSuspended: 1, reseller: ["imp-reseller"] });
  });

  it("puts jobs the old process left running back in the queue with their intent, in batches, ids kept", async () => {
    const dir = tempDir();
    const file = join(dir, "old.db");
    const sqlite = openSqliteStore(file, { clock: systemClock });
    await sqlite.migrate();
    for (let i = 0; i < 7; i++) await sqlite.jobs.enqueue({ kind: "noop", queueKey: `q${i}`, serviceId: `s${i}`, payload: { i } });
    const claimed = await sqlite.jobs.claim("old-host:4242", 2, 60_000);
    expect(claimed).toHaveLength(2);
    await sqlite.jobs.setIntent(claimed[0]!.id, "old-host:4242", { op: "register", ip: "198.18.201.1" }, true);
    await sqlite.alerts.raise("upstream", "Upstream down", "timeouts");
    const before = byId(await sqlite.jobs.list());
    await sqlite.close();

    const databaseUrl = (await freshDatabase()).url;
    const outcome = await importSqlite(file, databaseUrl, "the test database", { logger: silentLogger(), batchRows: 2 });
    expect(outcome).toEqual({ copied: { events: 0, services: 0, history: 0, jobs: 7, mails: 0, alerts: 1, audit: 0, webhook_keys: 0 }, requeued: 2 });

    const env = { DATABASE_URL: databaseUrl, DATABASE_PATH: file };
    const after = await readStoreOf(env, async (store) => {
      const jobs = byId(await store.jobs.list());
      const next = await store.jobs.enqueue({ kind: "noop", queueKey: "q-new" });
      return { jobs, next };
    });
    const running = new Set(claimed.map((j) => j.id));
    expect(after.jobs.map((j) => j.id)).toEqual(before.map((j) => j.id));
    for (const [i, job] of after.jobs.entries()) {
      const was = before[i]!;
      if (!running.has(job.id)) {
        expect(job).toEqual(was);
        continue;
      }
      expect(was.state).toBe("running");
      expect(job).toEqual({ ...was, state: "queued", leasedBy: null, leaseUntil: null, updatedAt: expect.any(Number) });
    }
    expect(after.jobs.find((j) => j.id === claimed[0]!.id)!.intent).toEqual({ op: "register", ip: "198.18.201.1" });
    expect(after.next).toEqual({ id: maxOf(before.map((j) => j.id)) + 1, created: true });

    // The target is in use now: a second run refuses and leaves it as it is.
    expect(await importSqlite(file, databaseUrl, "the test database", { logger: silentLogger() })).toEqual({
      refused: expect.stringMatching(/the PostgreSQL database at the test database is not empty \(it holds 8 jobs\).*nothing was copied/),
    });
  });
});
