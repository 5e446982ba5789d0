import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { watchDatabaseFile } from "../../src/store/sqlite/database-file.js";

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
