import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase, type Db } from "../../src/store/sqlite/database.js";
import { createGroupCommit } from "../../src/store/sqlite/group-commit.js";
import { walSync } from "../../src/store/sqlite/wal-sync.js";

// SQLite's durable writes (accepted webhooks, charging intents): committed in groups, and
// promised only once an fsync of the WAL, off the event loop, has returned after the commit.

function deferred() {
  let release!: () => void;
  let fail!: (err: Error) => void;
  const promise = new Promise<void>((ok, ko) => {
    release = ok;
    fail = ko;
  });
  return { promise, release, fail };
}

describe("group commit", () => {
  let dir: string;
  let db: Db;
  afterEach(() => {
    db?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const open = () => {
    dir = mkdtempSync(join(tmpdir(), "lb-group-"));
    db = openDatabase(join(dir, "g.db"));
    db.exec("CREATE TABLE t (v TEXT)");
    return db;
  };
  /** A group commit on a fresh database whose syncs each wait for the test to release them. */
  const heldSyncs = () => {
    open();
    const syncs: ReturnType<typeof deferred>[] = [];
    const group = createGroupCommit(db, () => {
      const d = deferred();
      syncs.push(d);
      return d.promise;
    });
    return { group, syncs };
  };
  const rows = () => (db.prepare("SELECT v FROM t ORDER BY rowid").all() as { v: string }[]).map((r) => r.v);

  it("keeps the savepoints' page copies in memory (temp_store=MEMORY), not in a temporary file", () => {
    // A group in which a write threw runs again with a savepoint per write; with temp_store FILE
    // a savepoint's sub-journal cost about as much CPU as the write itself (bench/RESULTS.md).
    open();
    expect(db.pragma("temp_store", { simple: true })).toBe(2);
  });

  it("resolves a write only after the sync that follows its commit has returned", async () => {
    const { group, syncs } = heldSyncs();
    let resolved = 0;
    const writes = ["a", "b"].map((v) => group.run(() => db.prepare("INSERT INTO t (v) VALUES (?)").run(v)).then(() => resolved++));
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    // One transaction for both, committed (visible), one sync asked for, nothing promised yet.
    expect(rows()).toEqual(["a", "b"]);
    expect(syncs).toHaveLength(1);
    expect(resolved).toBe(0);
    syncs[0]!.release();
    await Promise.all(writes);
    expect(resolved).toBe(2);
  });

  it("holds the writes that come during a group's fsync, and commits them together after it", async () => {
    const { group, syncs } = heldSyncs();
    const insert = (v: string) => group.run(() => db.prepare("INSERT INTO t (v) VALUES (?)").run(v));
    const first = insert("first");
    await new Promise((r) => setImmediate(r));
    expect(syncs).toHaveLength(1);
    // Three more while the first group's fsync runs: not committed yet, no second fsync.
    const later = ["b", "c", "d"].map(insert);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(rows()).toEqual(["first"]);
    expect(syncs).toHaveLength(1);
    syncs[0]!.release();
    await first;
    await new Promise((r) => setImmediate(r));
    // One commit and one fsync for the three.
    expect(rows()).toEqual(["first", "b", "c", "d"]);
    expect(syncs).toHaveLength(2);
    syncs[1]!.release();
    await Promise.all(later);
  });

  it("resolves a committed-only write at its commit, sharing the transaction with durable writes that wait for the sync", async () => {
    const { group, syncs } = heldSyncs();
    const insert = (v: string) => () => db.prepare("INSERT INTO t (v) VALUES (?)").run(v);
    let durableDone = false;
    const durable = group.run(insert("intent")).then(() => (durableDone = true));
    const ending = group.runCommitted(insert("ending"));
    await ending;
    // One transaction for both: the ending is committed and its promise kept, the intent not yet.
    expect(rows()).toEqual(["intent", "ending"]);
    expect(syncs).toHaveLength(1);
    expect(durableDone).toBe(false);
    syncs[0]!.release();
    await durable;
  });

  it("commits a committed-only write that comes during a group's fsync at once, while the durable ones wait for the next group", async () => {
    const { group, syncs } = heldSyncs();
    const insert = (v: string) => () => db.prepare("INSERT INTO t (v) VALUES (?)").run(v);
    const first = group.run(insert("first"));
    await new Promise((r) => setImmediate(r));
    expect(syncs).toHaveLength(1);
    const durable = group.run(insert("durable"));
    await group.runCommitted(insert("ending"));
    // Committed while the first group's fsync still runs, and no fsync asked for it.
    expect(rows()).toEqual(["first", "ending"]);
    expect(syncs).toHaveLength(1);
    syncs[0]!.release();
    await first;
    await new Promise((r) => setImmediate(r));
    expect(rows()).toEqual(["first", "ending", "durable"]);
    syncs[1]!.release();
    await durable;
  });

  it("asks for no fsync for a group of committed-only writes, and keeps their promise when a durable neighbour's sync fails", async () => {
    open();
    let n = 0;
    const group = createGroupCommit(db, () => (++n === 1 ? Promise.reject(new Error("EIO: disk gone")) : Promise.resolve()));
    await group.runCommitted(() => db.prepare("INSERT INTO t (v) VALUES ('alone')").run());
    expect(n).toBe(0);
    const durable = group.run(() => db.prepare("INSERT INTO t (v) VALUES ('x')").run());
    const committed = group.runCommitted(() => db.prepare("INSERT INTO t (v) VALUES ('y')").run());
    await expect(committed).resolves.toBeDefined();
    await expect(durable).rejects.toThrow(/EIO/);
    expect(rows()).toEqual(["alone", "x", "y"]);
  });

  it("rejects the writes of a batch whose sync failed, and only those", async () => {
    open();
    let n = 0;
    const group = createGroupCommit(db, () => (++n === 1 ? Promise.reject(new Error("EIO: disk gone")) : Promise.resolve()));
    const first = group.run(() => db.prepare("INSERT INTO t (v) VALUES ('x')").run());
    await expect(first).rejects.toThrow(/EIO/);
    await expect(group.run(() => db.prepare("INSERT INTO t (v) VALUES ('y')").run())).resolves.toBeDefined();
  });

  it("runs each write of a group once when none throws", async () => {
    open();
    const group = createGroupCommit(db, async () => {});
    let runs = 0;
    const insert = (v: string) =>
      group.run(() => {
        runs++;
        return db.prepare("INSERT INTO t (v) VALUES (?)").run(v);
      });
    await Promise.all(["a", "b", "c"].map(insert));
    expect(runs).toBe(3);
    expect(rows()).toEqual(["a", "b", "c"]);
  });

  it("after a write of the group threw, commits each other write once, in a group run again", async () => {
    open();
    let syncs = 0;
    const group = createGroupCommit(db, async () => void syncs++);
    const runs: Record<string, number> = { a: 0, bad: 0, c: 0 };
    const insert = (v: string) =>
      group.run(() => {
        runs[v]!++;
        db.prepare("INSERT INTO t (v) VALUES (?)").run(v);
        if (v === "bad") throw new Error("refused");
        return v;
      });
    const [a, bad, c] = [insert("a"), insert("bad"), insert("c")];
    await expect(bad).rejects.toThrow("refused");
    await expect(Promise.all([a, c])).resolves.toEqual(["a", "c"]);
    // The first pass (all together) stopped and was rolled back at the throw; the second ran
    // every other write in a savepoint, and not the one that threw.
    expect(rows()).toEqual(["a", "c"]);
    expect(runs).toEqual({ a: 2, bad: 1, c: 1 });
    expect(syncs).toBe(1);
  });

  it("does not run a group again when its transaction could not begin (the write lock is held elsewhere)", async () => {
    open();
    const path = db.name;
    const group = createGroupCommit(db, async () => {});
    db.pragma("busy_timeout = 0");
    const other = openDatabase(path);
    try {
      other.exec("BEGIN IMMEDIATE");
      let runs = 0;
      await expect(group.run(() => void runs++)).rejects.toMatchObject({ code: "SQLITE_BUSY" });
      expect(runs).toBe(0);
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
  });

  it("rolls back only the write that threw, and still syncs the others", async () => {
    open();
    let syncs = 0;
    const group = createGroupCommit(db, async () => void syncs++);
    const good = group.run(() => db.prepare("INSERT INTO t (v) VALUES ('kept')").run());
    const bad = group.run(() => {
      db.prepare("INSERT INTO t (v) VALUES ('dropped')").run();
      throw new Error("refused");
    });
    await expect(bad).rejects.toThrow("refused");
    await good;
    expect(rows()).toEqual(["kept"]);
    expect(syncs).toBe(1);
  });
});

describe("WAL sync", () => {
  it("runs one fsync at a time: calls during one share the next, which starts after it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lb-wal-"));
    const db = openDatabase(join(dir, "w.db"));
    try {
      db.exec("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('x')");
      const wal = walSync(db);
      const order: string[] = [];
      const first = wal.sync().then(() => order.push("first"));
      const second = wal.sync().then(() => order.push("second"));
      const third = wal.sync().then(() => order.push("third"));
      await Promise.all([first, second, third]);
      // The second and third came while the first ran: they share one later fsync.
      expect(order).toEqual(["first", "second", "third"]);
      await wal.close();
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("has nothing to do for an in-memory database", async () => {
    const db = openDatabase(":memory:");
    const wal = walSync(db);
    await expect(wal.sync()).resolves.toBeUndefined();
    await wal.close();
    db.close();
  });
});
