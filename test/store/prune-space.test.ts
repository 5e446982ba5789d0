import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { prune } from "../../src/retention/retention.js";
import { openSqliteStore } from "../../src/store/sqlite/store.js";
import type { IntakeDecision, IntakeItem, Store, StoredEvent } from "../../src/store/store.js";
import { fileBytes } from "../helpers/sqlite.js";

/**
 * The space a pruned payload held is used again (issue 25: the database stays flat). SQLite
 * rebalances a page when rows are deleted, not when one shrinks, and new events go at the end
 * of the table: payloads emptied in place left every old page mostly empty, and the file grew
 * by what the prune had removed. Measured in pages of the file, through a second connection.
 */
const DAY = 86_400_000;
const EVENTS = 400;
const PAYLOAD_BYTES = 2_000;

describe("pruning events on SQLite frees their payloads' pages for new events", () => {
  const clock = manualClock();
  let dir: string;
  let file: string;
  let store: Store;
  beforeEach(async () => {
    clock.set(Date.UTC(2026, 0, 1));
    dir = mkdtempSync(join(tmpdir(), "lb-space-"));
    file = join(dir, "bridge.db");
    store = openSqliteStore(file, { clock, maxAttempts: 3 });
    await store.migrate();
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const bytesOnDisk = () => fileBytes(file);

  /** `EVENTS` processed events of about PAYLOAD_BYTES each, as the intake writes them. */
  async function receive(round: string): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const serviceId = `s-${round}-${i}`;
      const r = await store.events.accept(
        "billing",
        [{ webhookId: `wh-${round}-${i}`, event: { type: "service.renewed", service: { id: serviceId } }, queueKey: `svc:${serviceId}`, ip: undefined } satisfies IntakeItem<StoredEvent>],
        (): IntakeDecision<string> => ({
          write: true,
          result: "ok",
          event: { type: "service.renewed", serviceId, payload: JSON.stringify({ note: "x".repeat(PAYLOAD_BYTES) }), outcome: "applied", detail: null },
        }),
        () => true,
      );
      ids.push((r.items[0] as { eventId: string }).eventId);
    }
    return ids;
  }

  it("a second round of events after the first's prune takes the pages the first's payloads held", async () => {
    const first = await receive("a");
    clock.advance(91 * DAY);
    expect(await prune({ store, clock, days: 90 })).toMatchObject({ event_payloads: EVENTS });
    const afterPrune = bytesOnDisk();

    await receive("b");
    const grown = bytesOnDisk() - afterPrune;
    // The second round's payloads alone are EVENTS × PAYLOAD_BYTES (800 kB); emptied in place,
    // the file grew by all of it. Now most of it fits in the pages the first round gave back.
    expect(grown).toBeLessThan((EVENTS * PAYLOAD_BYTES) / 4);

    // Every event of the first round is still there, as it was but for its payload, in the same order.
    for (const id of first) expect(await store.events.get(id)).toMatchObject({ id, payload: "{}", outcome: "applied", type: "service.renewed" });
    const history = await store.services.history("s-a-7");
    expect(history.map((h) => h.action)).toEqual(["received service.renewed"]);
  });
});
