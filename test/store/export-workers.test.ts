import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { Worker } from "node:worker_threads";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EXPORT_PAGE } from "../../src/store/license-export.js";
import { EXPORT_WORKERS, exportWorkers } from "../../src/store/sqlite/export.js";
import { licenseView, type Store } from "../../src/store/store.js";
import { adopted } from "../helpers/adopted-book.js";
import { TEST_ADMIN_TOKEN } from "../helpers/bridge.js";
import { usePairPerFile } from "../helpers/e2e-harness.js";
import { sqliteFactory, type OpenedStore } from "../helpers/stores.js";
import { waitFor } from "../helpers/wait.js";

// Issue 25: each SQLite export runs in a worker thread of its own; more than EXPORT_WORKERS at
// once would wait their turn rather than each take a thread. Shown without timings: the worker
// threads the process starts are counted as Node announces them, and the exports are read at
// the test's own pace, so the ones started first hold their workers for as long as it likes.

/** More licences than one chunk holds: an export read to its first chunk still holds its worker. */
const BOOK = 2 * EXPORT_PAGE + 37;

/** Worker threads started in this process (Node publishes each on the "worker_threads" channel): in all, and the most alive at once. */
function countThreads() {
  let started = 0;
  let alive = 0;
  let most = 0;
  const onStart = (message: unknown) => {
    started++;
    most = Math.max(most, ++alive);
    (message as { worker: Worker }).worker.once("exit", () => alive--);
  };
  subscribe("worker_threads", onStart);
  return {
    counts: () => ({ started, most }),
    stop: () => unsubscribe("worker_threads", onStart),
  };
}

/** An export the test reads at its own pace, like a slow client. */
function slowExport(store: Store, signal?: AbortSignal) {
  const chunks = store.services.exportChunks({}, { signal })[Symbol.asyncIterator]();
  let text = "";
  const next = async () => {
    const r = await chunks.next();
    if (!r.done) text += r.value;
    return r;
  };
  return {
    /** Asks for the next chunk: the first is there once the export has its worker. */
    next,
    /** Reads to the end; every line of the export. */
    async rest(): Promise<unknown[]> {
      while (!(await next()).done);
      return text.split("\n").slice(0, -1).map((line) => JSON.parse(line) as unknown);
    },
  };
}

describe("the SQLite export's worker threads", () => {
  let opened: OpenedStore;
  let threads: ReturnType<typeof countThreads>;
  /** Every licence of the book, as an export answers it. */
  let all: unknown[];

  beforeEach(async () => {
    opened = await sqliteFactory.open({ clock: "database" });
    expect((await opened.store.adoption.insert(Array.from({ length: BOOK }, (_, i) => adopted(i)), () => undefined)).inserted).toHaveLength(BOOK);
    all = (await opened.store.services.page({ limit: 1000 })).items.map(licenseView);
    threads = countThreads();
  });

  afterEach(async () => {
    threads.stop();
    await opened.close();
  });

  it("run two at once at most (EXPORT_WORKERS): a third export waits its turn, then answers every licence", async () => {
    const [a, b, c] = [slowExport(opened.store), slowExport(opened.store), slowExport(opened.store)];
    const [firstA, firstB, firstC] = [a.next(), b.next(), c.next()];
    await Promise.all([firstA, firstB]);
    expect(threads.counts()).toEqual({ started: 2, most: 2 });
    expect(exportWorkers).toMatchObject({ held: 2, waiting: 1 });

    // The first export read to its end gives its place to the third.
    expect(await a.rest()).toEqual(all);
    expect((await firstC).done).toBe(false);
    expect(await b.rest()).toEqual(all);
    expect(await c.rest()).toEqual(all);
    expect(threads.counts()).toEqual({ started: 3, most: 2 });
    expect(exportWorkers).toMatchObject({ held: 0, waiting: 0 });
  });

  it("an export whose caller leaves while it waits gives up its turn and starts no worker", async () => {
    const left = new AbortController();
    const [a, b, c] = [slowExport(opened.store), slowExport(opened.store), slowExport(opened.store, left.signal)];
    const [firstA, firstB, firstC] = [a.next(), b.next(), c.next()];
    await Promise.all([firstA, firstB]);
    expect(threads.counts()).toEqual({ started: 2, most: 2 });
    expect(exportWorkers).toMatchObject({ held: 2, waiting: 1 });

    left.abort();
    await expect(firstC).rejects.toMatchObject({ name: "AbortError" });
    expect(exportWorkers).toMatchObject({ held: 2, waiting: 0 });
    expect(await a.rest()).toEqual(all);
    expect(await b.rest()).toEqual(all);
    // Places go in arrival order: had the third still waited, it would have taken the place the
    // first freed, and this one the second's.
    expect(await slowExport(opened.store).rest()).toEqual(all);
    expect(threads.counts()).toEqual({ started: 3, most: 2 });
    expect(exportWorkers).toMatchObject({ held: 0, waiting: 0 });
  });
});

describe("GET /admin/licenses/export while every export worker is taken", () => {
  const pair = usePairPerFile({
    setup: async ({ bridge }) => {
      expect(bridge.service.store.dialect).toBe("sqlite");
      await bridge.service.store.adoption.insert(Array.from({ length: BOOK }, (_, i) => adopted(i)), () => undefined);
    },
  });
  let threads: ReturnType<typeof countThreads>;
  beforeEach(() => {
    threads = countThreads();
  });
  afterEach(() => threads.stop());

  const exportOverHttp = (signal?: AbortSignal) =>
    fetch(`${pair().bridge.url}/admin/licenses/export`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, signal });

  /** Both places taken by exports read to their first chunk: what a request finds while two slow clients read. */
  async function takeEveryWorker() {
    const holders = Array.from({ length: EXPORT_WORKERS }, () => slowExport(pair().bridge.service.store));
    await Promise.all(holders.map((h) => h.next()));
    return holders;
  }

  it("a client that waits is answered every licence once a worker is free", async () => {
    const holders = await takeEveryWorker();
    const answer = exportOverHttp();
    await waitFor(() => exportWorkers.waiting === 1, 10_000, "the request to wait for a worker");
    expect(threads.counts().started).toBe(EXPORT_WORKERS);

    await holders[0]!.rest();
    const res = await answer;
    expect(res.status).toBe(200);
    const ids = (await res.text()).split("\n").slice(0, -1).map((line) => (JSON.parse(line) as { service_id: string }).service_id);
    expect(ids).toEqual(Array.from({ length: BOOK }, (_, i) => adopted(i).service.service_id));
    await holders[1]!.rest();
    expect(threads.counts()).toEqual({ started: EXPORT_WORKERS + 1, most: EXPORT_WORKERS });
  });

  it("a client that goes away while it waits gives up its turn, and no worker is started for it", async () => {
    const holders = await takeEveryWorker();
    const gone = new AbortController();
    const answer = exportOverHttp(gone.signal);
    await waitFor(() => exportWorkers.waiting === 1, 10_000, "the request to wait for a worker");
    gone.abort();
    await expect(answer).rejects.toThrow();
    await waitFor(() => exportWorkers.waiting === 0, 10_000, "the request to give up its turn");

    for (const h of holders) await h.rest();
    // Places go in arrival order: had the request still waited, it would have had the first place freed.
    const res = await exportOverHttp();
    expect(res.status).toBe(200);
    expect((await res.text()).split("\n").slice(0, -1)).toHaveLength(BOOK);
    expect(threads.counts()).toEqual({ started: EXPORT_WORKERS + 1, most: EXPORT_WORKERS });
    expect(exportWorkers).toMatchObject({ held: 0, waiting: 0 });
  });
});
