import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock.js";
import { watchDatabaseFile } from "../../src/store/sqlite/database-file.js";
import { openSqliteStore, type SqliteStore } from "../../src/store/sqlite/store.js";
import { StoreUnavailableError } from "../../src/store/store.js";
import { rowsChangedBy } from "../helpers/sqlite.js";

describe("watchDatabaseFile", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("looks once per turn of the event loop: a file removed during a turn is found lost by the next turn's first check, and stays lost", async () => {
    dir = mkdtempSync(join(tmpdir(), "lb-db-file-"));
    const path = join(dir, "bridge.db");
    writeFileSync(path, "");
    const told: string[] = [];
    const watch = watchDatabaseFile(path, { onLost: (reason) => told.push(reason), intervalMs: 60_000 });
    try {
      expect(watch.check()).toBeUndefined();
      rmSync(path);
      // The same turn: the look made at its start answers.
      expect(watch.check()).toBeUndefined();
      await nextTurn();
      expect(watch.check()).toMatch(/^the database file was deleted while the service was running/);
      writeFileSync(path, "");
      await nextTurn();
      expect(watch.check()).toMatch(/was deleted/);
      expect(told).toHaveLength(1);
    } finally {
      watch.stop();
    }
  });
});

describe("a SQLite store whose file is lost", () => {
  let dir: string | undefined;
  let store: SqliteStore | undefined;
  afterEach(async () => {
    await store?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = store = undefined;
  });

  it("refuses every write with StoreUnavailableError, 503 with Retry-After, and writes nothing; its reads still answer", async () => {
    dir = mkdtempSync(join(tmpdir(), "lb-db-file-"));
    const path = join(dir, "bridge.db");
    store = openSqliteStore(path, { clock: systemClock });
    await store.migrate();
    store.watchFile(path, () => {});
    const { id } = await store.jobs.enqueue({ kind: "test", queueKey: "q-1" });
    await store.sessions.create("a".repeat(64), { operator: "admin", role: "admin", created_at: 1, last_seen_at: 1 });

    rmSync(path);
    await nextTurn();
    const changed = rowsChangedBy(store);
    const writes: Record<string, () => Promise<unknown>> = {
      "jobs.enqueue": () => store!.jobs.enqueue({ kind: "test", queueKey: "q-2" }),
      "jobs.retry": () => store!.jobs.retry(id, { actor: "admin", action: "job.retry" }),
      "audit.record": () => store!.audit.record({ actor: "admin", action: "test", outcome: "ok" }),
      "sessions.touch": () => store!.sessions.touch("a".repeat(64), 2),
      "alerts.raise": () => store!.alerts.raise("k", "subject", "detail"),
    };
    for (const [write, call] of Object.entries(writes)) {
      const refused = await call().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused, write).toBeInstanceOf(StoreUnavailableError);
      expect(refused, write).toMatchObject({ status: 503, retryAfterSeconds: expect.any(Number), reason: expect.stringMatching(/deleted/) });
    }
    expect(rowsChangedBy(store)).toBe(changed);
    expect((await store.jobs.get(id))?.state).toBe("queued");
    expect(await store.sessions.get("a".repeat(64))).toMatchObject({ last_seen_at: 1 });
  });
});
