import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { manualClock, systemClock } from "../src/clock.js";
import { prune } from "../src/retention/retention.js";
import type { LicenseQuery, PlannedRead, Store } from "../src/store/store.js";
import { openDatabase } from "../src/store/sqlite/database.js";
import { currentVersion, DatabaseNewerThanCodeError, migrate, readMigrations } from "../src/store/sqlite/migrations.js";
import { openSqliteStore } from "../src/store/sqlite/store.js";
import { silentLogger } from "../src/log/logger.js";
import { pgMigrate, readPgMigrations } from "../src/store/postgres/migrations.js";
import { openPostgresStore } from "../src/store/postgres/store.js";
import { planProblems } from "./helpers/plans.js";
import { freshDatabase, openSession, postgresSkipReason } from "./helpers/postgres.js";
import { insertRows, migrateBeyondCode, tableSchema } from "./helpers/sqlite.js";

const dbFile = () => join(mkdtempSync(join(tmpdir(), "lb-mig-")), "t.db");

describe("migrations (SQLite: migrations/sqlite)", () => {
  it("a fresh database gets every migration, each recorded", async () => {
    const file = dbFile();
    const store = openSqliteStore(file, { clock: systemClock });
    try {
      const applied = await store.migrate();
      const all = readMigrations();
      expect(applied).toEqual(all.map((m) => ({ id: m.id, name: m.name })));
      expect(await store.migrationStatus()).toEqual({ databaseVersion: all.at(-1)!.id, codeVersion: all.at(-1)!.id, pending: [] });
      // Every table the store works on is there (and empty).
      expect(await store.counts()).toEqual({ events: 0, services: 0, jobs: 0, history: 0, mails: 0 });
      // Write-ahead logging: the log file sits beside the database while it is open.
      expect(existsSync(`${file}-wal`)).toBe(true);
    } finally {
      await store.close();
    }
  });

  it("an up-to-date database is left alone", async () => {
    const file = dbFile();
    const first = openSqliteStore(file, { clock: systemClock });
    await first.migrate();
    await first.close();
    const store = openSqliteStore(file, { clock: systemClock });
    try {
      expect(await store.migrate()).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("a database newer than the code is refused and not touched", async () => {
    const file = dbFile();
    const newer = migrateBeyondCode(file);
    const store = openSqliteStore(file, { clock: systemClock });
    try {
      await expect(store.migrate()).rejects.toThrow(DatabaseNewerThanCodeError);
      expect((await store.migrationStatus()).databaseVersion).toBe(newer);
    } finally {
      await store.close();
    }
  });

  it("a migration that fails leaves the database at the previous version", () => {
    const db = openDatabase(dbFile());
    try {
      const known = readMigrations();
      const broken = [...known, { id: 999, name: "broken", sql: "CREATE TABLE ok_table (x); THIS IS NOT SQL;" }];
      expect(() => migrate(db, broken)).toThrow();
      expect(currentVersion(db)).toBe(known.at(-1)!.id);
      // Nothing of the broken migration is left: the same table can be created by the next one.
      expect(migrate(db, [...known, { id: 999, name: "fixed", sql: "CREATE TABLE ok_table (x);" }]).map((m) => m.id)).toEqual([999]);
      expect(currentVersion(db)).toBe(999);
    } finally {
      db.close();
    }
  });
});

describe("migration 013 (SQLite rebuilds the jobs table for the cancelled state)", () => {
  const DAY = 86_400_000;
  const WORKER = "w1";

  /** A database at migration 012 holding jobs in every state, the newest id pruned away; the store on it. */
  async function jobsAt012(file: string) {
    const db = openDatabase(file);
    try {
      migrate(db, readMigrations().filter((m) => m.id <= 12));
    } finally {
      db.close();
    }
    const clock = manualClock();
    // The store's operations on 012's tables: 013 adds no column, it only widens a CHECK.
    const store = openSqliteStore(file, { clock, maxAttempts: 1 });
    const end = async (id: number, ending: "succeeded" | "blocked" | "failed" | "running", intent?: unknown) => {
      const job = (await store.jobs.claim(WORKER, 50, 365 * DAY)).find((j) => j.id === id)!;
      if (intent !== undefined) await store.jobs.setIntent(id, WORKER, intent, true);
      if (ending !== "running") await store.jobs.finish(job, WORKER, ending === "succeeded" ? { state: "succeeded" } : { state: ending, error: "stopped", code: "job_failed" });
    };
    const enqueue = async (job: Parameters<typeof store.jobs.enqueue>[0]) => (await store.jobs.enqueue(job)).id;
    await end(await enqueue({ kind: "register", serviceId: "a", queueKey: "svc:a" }), "blocked", { op: "register", ip: "203.0.113.1" });
    const failed = await enqueue({ kind: "change_ip", serviceId: "b", queueKey: "svc:b", payload: { ip: "203.0.113.9" } });
    await end(failed, "failed");
    await end(await enqueue({ kind: "renew", serviceId: "c", queueKey: "svc:c", uniqueKey: "renew:c:1" }), "running", { op: "renew" });
    await enqueue({ kind: "mail_install", serviceId: "a", priority: 0, uniqueKey: "mail:install:e1", delayMs: 400 * DAY });
    await enqueue({ kind: "suspend", serviceId: "b", queueKey: "svc:b" });
    const blocked = await enqueue({ kind: "renew", serviceId: "d", queueKey: "svc:d" });
    await end(blocked, "blocked");
    // The newest job ends and is pruned: ids must go on beyond it, not from the highest left.
    await end(await enqueue({ kind: "alert_mail" }), "succeeded");
    clock.advance(91 * DAY);
    expect(await prune({ store, clock, days: 90 })).toMatchObject({ jobs: 1 });
    return { store, clock, blocked, failed };
  }

  it("keeps every job as it was, the counters, the ids given and every index and trigger; then takes cancelled jobs", async () => {
    const file = dbFile();
    const { store, blocked } = await jobsAt012(file);
    const before = { jobs: await store.jobs.list({ limit: 100 }), counts: await store.jobs.counts(), total: (await store.jobs.page({ limit: 1 })).total };
    const schemaBefore = tableSchema(file, "jobs");
    await store.close();
    expect(schemaBefore.sequence).toBeGreaterThan(Math.max(...before.jobs.map((j) => j.id)));

    const clock = manualClock(Date.UTC(2026, 3, 2));
    const migrated = openSqliteStore(file, { clock, maxAttempts: 1 });
    try {
      expect((await migrated.migrate()).map((m) => m.id)).toEqual([13, 14, 15, 16, 17]);
      expect(await migrated.jobs.list({ limit: 100 })).toEqual(before.jobs);
      expect(await migrated.jobs.counts()).toEqual({ ...before.counts, cancelled: 0 });
      expect((await migrated.jobs.page({ limit: 1 })).total).toBe(before.total);

      // The same indexes and triggers, word for word; only the table's CHECK is wider.
      const after = tableSchema(file, "jobs");
      const besides = (o: TableSchemaObjects) => o.filter((x) => x.type !== "table");
      expect(besides(after.objects)).toEqual(besides(schemaBefore.objects));
      expect(after.objects.find((o) => o.type === "table")?.sql).toContain("'blocked', 'cancelled'");
      expect(after.sequence).toBe(schemaBefore.sequence);
      // And what a fresh database gets.
      const fresh = dbFile();
      const empty = openSqliteStore(fresh, { clock: systemClock });
      await empty.migrate();
      await empty.close();
      expect(after.objects).toEqual(tableSchema(fresh, "jobs").objects);

      // The reads on jobs still go through their indexes.
      for (const read of ["jobs by state", "jobs by kind", "jobs by service", "jobs total", "job counts", "oldest due job"] satisfies PlannedRead[]) {
        expect(planProblems("sqlite", await migrated.explain(read)).scans, read).toEqual([]);
      }

      // New ids go on from the sequence, and the counters follow the rows.
      expect((await migrated.jobs.enqueue({ kind: "test" })).id).toBe(schemaBefore.sequence! + 1);
      expect(await migrated.jobs.cancel(blocked, { actor: "otto", action: "job.cancel" })).toMatchObject({ cancelled: { id: blocked, state: "cancelled" } });
      expect(await migrated.jobs.counts()).toEqual({ ...before.counts, queued: before.counts.queued + 1, blocked: before.counts.blocked - 1, cancelled: 1 });
    } finally {
      await migrated.close();
    }
  });
});

describe("migration 013 on PostgreSQL (the CHECK dropped and made again)", () => {
  const skip = postgresSkipReason();
  if (skip) {
    it.skip(`skipped: ${skip}`, () => {});
    return;
  }

  it("widens jobs.state on a database at 012, its jobs and counters kept", async () => {
    const { url } = await freshDatabase();
    const store = await openPostgresStore(url, { clock: manualClock(), logger: silentLogger() });
    try {
      await pgMigrate(store.db, readPgMigrations().filter((m) => m.id <= 12));
      const { id: blocked } = await store.jobs.enqueue({ kind: "renew", serviceId: "a", queueKey: "svc:a" });
      await store.jobs.enqueue({ kind: "suspend", serviceId: "a", queueKey: "svc:a" });
      const [job] = await store.jobs.claim("w1", 1, 60_000);
      await store.jobs.finish(job!, "w1", { state: "blocked", error: "no balance", code: "insufficient_balance" });
      const before = { jobs: await store.jobs.list(), counts: await store.jobs.counts() };

      expect((await store.migrate()).map((m) => m.id)).toEqual([13, 14, 15, 16, 17]);
      expect(await store.jobs.list()).toEqual(before.jobs);
      expect(await store.jobs.counts()).toEqual({ ...before.counts, cancelled: 0 });
      expect(await store.jobs.cancel(blocked, { actor: "otto", action: "job.cancel" })).toMatchObject({ cancelled: { id: blocked, state: "cancelled" } });
      expect(await store.jobs.counts()).toEqual({ ...before.counts, blocked: 0, cancelled: 1 });
    } finally {
      await store.close();
    }
  });
});

/**
 * Migration 016 (issue 36): services name who sold their licence, what it sold and its own id of
 * the licence. Every service already there is the reseller's, and the counters the listings'
 * totals read, now kept per status and provider, count them so.
 */
describe("migration 016 (services name their provider)", () => {
  const DAY = 86_400_000;
  /** A service as release 015 wrote it. */
  const at015 = (serviceId: string, status: string, i: number) => ({
    service_id: serviceId,
    product_id: "12",
    kind: "licence",
    type: "cpanel",
    ip: `203.0.113.${i}`,
    billing_cycle: "monthly",
    months: 1,
    status,
    expires_at: Date.UTC(2026, 1, 1) + i * DAY,
    companions: "[]",
    license_key: `lb_${String(i).padStart(24, "0")}`,
    created_at: Date.UTC(2026, 0, 1),
    updated_at: Date.UTC(2026, 0, 1),
  });
  const book = [at015("a", "active", 1), at015("b", "suspended", 2), at015("c", "active", 3), at015("d", "terminated", 4)];

  /** What a store migrated from 015 must show of `book`, and how its totals follow later writes. */
  async function checkMigrated(store: Store): Promise<void> {
    const rows = await store.services.list();
    expect(rows.map((r) => [r.service_id, r.provider, r.sku, r.upstream_id, r.status, r.expires_at])).toEqual(
      book.map((b) => [b.service_id, "reseller", null, null, b.status, b.expires_at]),
    );
    const total = async (filter: Omit<LicenseQuery, "limit">) => (await store.services.page({ ...filter, limit: 1 })).total;
    expect(await total({ provider: "reseller" })).toBe(4);
    expect(await total({ provider: "reseller", status: "active" })).toBe(2);
    expect(await total({ status: "active" })).toBe(2);
    expect(await total({})).toBe(4);
    expect(await total({ provider: "manage2" })).toBe(0);
    expect(await store.consoleReads.statusCounts()).toEqual({ active: 2, suspended: 1, terminated: 1 });

    // The counters follow the rows from here on.
    await store.services.change({ serviceId: "a", patch: { provider: "manage2", sku: "12345", upstream_id: "L-1" } });
    expect(await total({ provider: "manage2", status: "active" })).toBe(1);
    expect(await total({ provider: "reseller" })).toBe(3);
    expect(await total({ status: "active" })).toBe(2);
    expect((await store.services.page({ provider: "reseller", status: "active", limit: 10 })).items.map((r) => r.service_id)).toEqual(["c"]);
  }

  it("on SQLite: every service of a database at 015 is the reseller's, counted so, its listings index-served", async () => {
    const file = dbFile();
    const db = openDatabase(file);
    try {
      migrate(db, readMigrations().filter((m) => m.id <= 15));
    } finally {
      db.close();
    }
    insertRows(file, "services", book);
    const store = openSqliteStore(file, { clock: manualClock() });
    try {
      expect((await store.migrate()).map((m) => m.id)).toEqual([16, 17]);
      await checkMigrated(store);
      for (const read of ["licenses by provider", "licenses by provider and status", "licenses total by provider", "licenses by status", "licenses total"] satisfies PlannedRead[]) {
        expect(planProblems("sqlite", await store.explain(read)).scans, read).toEqual([]);
      }
    } finally {
      await store.close();
    }
  });

  const skip = postgresSkipReason();
  it.skipIf(skip !== undefined)(`on PostgreSQL: every service of a database at 015 is the reseller's, counted so${skip ? ` (skipped: ${skip})` : ""}`, async () => {
    const { url } = await freshDatabase();
    const store = await openPostgresStore(url, { clock: manualClock(), logger: silentLogger() });
    try {
      await pgMigrate(store.db, readPgMigrations().filter((m) => m.id <= 15));
      const session = await openSession(url);
      try {
        await session.insertRows("services", book);
      } finally {
        await session.close();
      }
      expect((await store.migrate()).map((m) => m.id)).toEqual([16, 17]);
      await checkMigrated(store);
    } finally {
      await store.close();
    }
  });
});

/**
 * Migration 017 (issue 36): the services recording a provider's licence id are read through an
 * index of their own, partial (most services record none), before an order adopts a licence found
 * at its IP: one licence belongs to one service by its id too.
 */
describe("migration 017 (the services recording a licence id)", () => {
  /** A Manage2 service as release 016 wrote it, `upstream_id` its licence id. */
  const at016 = (serviceId: string, status: string, i: number, upstreamId: string | null) => ({
    service_id: serviceId,
    product_id: "40",
    kind: "licence",
    type: "cpanel",
    ip: `203.0.113.${i}`,
    billing_cycle: "monthly",
    months: 1,
    status,
    companions: "[]",
    license_key: `lb_${String(i).padStart(24, "0")}`,
    provider: "manage2",
    sku: "12345",
    upstream_id: upstreamId,
    created_at: Date.UTC(2026, 0, 1),
    updated_at: Date.UTC(2026, 0, 1),
  });
  const book = [at016("a", "suspended", 1, "77"), at016("b", "terminated", 2, "77"), at016("c", "active", 3, "78"), at016("d", "pending", 4, null)];

  async function checkMigrated(store: Store): Promise<void> {
    expect((await store.services.byLicenceId("manage2", "77")).map((s) => s.service_id)).toEqual(["a"]);
    expect((await store.services.byLicenceId("manage2", "78")).map((s) => s.service_id)).toEqual(["c"]);
    expect(planProblems(store.dialect, await store.explain("services by licence id")).scans).toEqual([]);
    expect((await store.explain("services by licence id")).join("\n")).toMatch(/services_upstream_id/);
  }

  it("on SQLite: the services of a database at 016 recording a licence id are found through the index", async () => {
    const file = dbFile();
    const db = openDatabase(file);
    try {
      migrate(db, readMigrations().filter((m) => m.id <= 16));
    } finally {
      db.close();
    }
    insertRows(file, "services", book);
    const store = openSqliteStore(file, { clock: manualClock() });
    try {
      expect((await store.migrate()).map((m) => m.id)).toEqual([17]);
      await checkMigrated(store);
    } finally {
      await store.close();
    }
  });

  const skip = postgresSkipReason();
  it.skipIf(skip !== undefined)(`on PostgreSQL: the services of a database at 016 recording a licence id are found through the index${skip ? ` (skipped: ${skip})` : ""}`, async () => {
    const { url } = await freshDatabase();
    const store = await openPostgresStore(url, { clock: manualClock(), logger: silentLogger() });
    try {
      await pgMigrate(store.db, readPgMigrations().filter((m) => m.id <= 16));
      const session = await openSession(url);
      try {
        await session.insertRows("services", book);
      } finally {
        await session.close();
      }
      expect((await store.migrate()).map((m) => m.id)).toEqual([17]);
      await checkMigrated(store);
    } finally {
      await store.close();
    }
  });
});

type TableSchemaObjects = ReturnType<typeof tableSchema>["objects"];
