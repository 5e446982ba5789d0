import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openDatabase } from "../src/store/sqlite/database.js";
import { currentVersion, DatabaseNewerThanCodeError, migrate, readMigrations } from "../src/store/sqlite/migrations.js";

const dbFile = () => join(mkdtempSync(join(tmpdir(), "lb-mig-")), "t.db");

describe("migrations", () => {
  it("a fresh database gets every migration, each recorded", () => {
    const db = openDatabase(dbFile());
    const applied = migrate(db);
    const all = readMigrations();
    expect(applied.map((m) => m.id)).toEqual(all.map((m) => m.id));
    expect(currentVersion(db)).toBe(all.at(-1)!.id);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all().map((r) => (r as { name: string }).name);
    expect(tables).toEqual(expect.arrayContaining(["events", "services", "jobs", "history", "migrations"]));
    expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
  });

  it("an up-to-date database is left alone", () => {
    const file = dbFile();
    migrate(openDatabase(file));
    const db = openDatabase(file);
    expect(migrate(db)).toEqual([]);
  });

  it("a database newer than the code is refused and not touched", () => {
    const db = openDatabase(dbFile());
    migrate(db);
    const newest = currentVersion(db);
    db.prepare("INSERT INTO migrations (id, name, applied_at) VALUES (?, 'from_the_future', '2030-01-01')").run(newest + 1);
    expect(() => migrate(db)).toThrow(DatabaseNewerThanCodeError);
    expect(currentVersion(db)).toBe(newest + 1);
  });

  it("a migration that fails leaves the database at the previous version", () => {
    const db = openDatabase(dbFile());
    const broken = [...readMigrations(), { id: 999, name: "broken", sql: "CREATE TABLE ok_table (x); THIS IS NOT SQL;" }];
    expect(() => migrate(db, broken)).toThrow();
    expect(currentVersion(db)).toBe(readMigrations().at(-1)!.id);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'ok_table'").get()).toBeUndefined();
  });
});
