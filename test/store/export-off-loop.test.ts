import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adopted } from "../helpers/adopted-book.js";
import { startTestBridge, startTestSandbox, TEST_ADMIN_TOKEN, type TestBridge, type TestSandbox } from "../helpers/bridge.js";
import { countStatements } from "../helpers/sqlite.js";

// Issue 25: better-sqlite3 reads on the thread that asks, so an export read by the service would
// hold its event loop for every page (and every line of JSON). The export's reads run in a worker
// thread with a connection of its own. Shown without timings: the statements the service's own
// thread runs are counted while an export of thousands of licences is read and /healthz answered.

/** Enough licences for many pages (30 of EXPORT_PAGE), few enough to write in a second. */
const BOOK = 3000;

describe("the licence export on SQLite", () => {
  let sb: TestSandbox;
  let bridge: TestBridge;

  beforeAll(async () => {
    sb = await startTestSandbox();
    bridge = await startTestBridge(sb);
    expect(bridge.service.store.dialect).toBe("sqlite");
    const { inserted } = await bridge.service.store.adoption.insert(Array.from({ length: BOOK }, (_, i) => adopted(i)), () => undefined);
    expect(inserted).toHaveLength(BOOK);
  }, 60_000);

  afterAll(async () => {
    await bridge?.close();
    await sb?.close();
  });

  it("reads no licence on the service's event loop, which answers /healthz while the export runs", async () => {
    const statements = countStatements();
    try {
      let exporting = true;
      const exported = (async () => {
        const res = await fetch(`${bridge.url}/admin/licenses/export`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
        expect(res.status).toBe(200);
        return res.text();
      })().finally(() => (exporting = false));
      let answered = 0;
      while (exporting) {
        expect((await fetch(`${bridge.url}/healthz`)).status).toBe(200);
        answered++;
      }
      const ids = (await exported).split("\n").slice(0, -1).map((line) => (JSON.parse(line) as { service_id: string }).service_id);

      expect(ids).toEqual(Array.from({ length: BOOK }, (_, i) => adopted(i).service.service_id));
      expect(answered).toBeGreaterThan(0);
      // The service's thread read no page of the export (nor a total): every read was the worker's.
      expect(statements.of(/\bFROM services\b/)).toBe(0);
    } finally {
      statements.stop();
    }
  });
});
