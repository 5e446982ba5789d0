import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { systemClock } from "../src/clock.js";
import { openDatabase } from "../src/store/sqlite/database.js";
import { currentVersion, DatabaseNewerThanCodeError, migrate, readMigrations } from "../src/store/sqlite/migrations.js";
import { openSqliteStore } from "../src/store/sqlite/store.js";
import { migrateBeyondCode } from "./helpers/sqlite.js";

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
