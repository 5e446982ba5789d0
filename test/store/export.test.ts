import { beforeEach, expect, it } from "vitest";
import { printListing } from "../../src/cli/paging.js";
import type { Output } from "../../src/cli/output.js";
import { EXPORT_PAGE } from "../../src/store/license-export.js";
import { licenseView, type LicenseFilter } from "../../src/store/store.js";
import { adopted } from "../helpers/adopted-book.js";
import { describeEachStore } from "../helpers/stores.js";

// An export (`licenses list --all --json`) reads page after page; a SQLite read runs on the event
// loop, so without a turn of the loop between pages a long export would hold every request of
// the process until it ends. Shown without timings: a task that only runs when the loop turns
// (setImmediate, the check phase after I/O) gets to run between every two page reads.

describeEachStore("an export on $name", {}, ({ store }) => {
  beforeEach(async () => {
    for (let i = 0; i < 12; i++) await store.jobs.enqueue({ kind: "renew", queueKey: `svc:e${i}` });
  });

  it("lets the event loop turn between every two pages, and prints one valid page object", async () => {
    const log: string[] = [];
    let done = false;
    // Stands for the rest of the process (an HTTP request, the runner): runs whenever the loop turns.
    const others = (async () => {
      while (!done) {
        log.push("turn");
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const lines: string[] = [];
    const out: Output = { json: true, out: (t) => lines.push(t), err: () => {} };
    await printListing(out, { all: true }, { limit: 2 }, async (page) => {
      log.push("page");
      return store.jobs.page(page);
    }, { key: "jobs", noun: "job(s)", table: () => "" });
    done = true;
    await others;

    const pages = log.filter((e) => e === "page").length;
    expect(pages).toBe(6);
    // No two page reads follow each other without a turn of the loop between them.
    expect(log.join(" ")).not.toContain("page page");
    const printed = JSON.parse(lines.join("\n")) as { jobs: { id: number }[]; next_cursor: null; total: number };
    expect(printed).toMatchObject({ next_cursor: null, total: 12 });
    expect(printed.jobs.map((j) => j.id)).toEqual((await store.jobs.list()).map((j) => j.id));
  });
});

/** Every line of an export's chunks, each chunk checked to end a line. */
async function linesOf(chunks: AsyncIterable<string>): Promise<unknown[]> {
  let text = "";
  for await (const chunk of chunks) {
    expect(chunk.endsWith("\n")).toBe(true);
    text += chunk;
  }
  return text.split("\n").slice(0, -1).map((line) => JSON.parse(line) as unknown);
}

describeEachStore("the licence export on $name", {}, ({ store }) => {
  /** More licences than two chunks hold, written out of service id order. */
  const BOOK = 2 * EXPORT_PAGE + 37;

  beforeEach(async () => {
    const order = Array.from({ length: BOOK }, (_, i) => (i * 97) % BOOK);
    expect((await store.adoption.insert(order.map(adopted), () => undefined)).inserted).toHaveLength(BOOK);
  });

  /** What the listing's pages show of the licences the filter matches, all of them. */
  const listed = async (filter: LicenseFilter) => (await store.services.page({ ...filter, limit: 1000 })).items.map(licenseView);

  it("answers every licence the filter matches, licenseView one a line in service id order, in chunks of whole lines", async () => {
    const all = await linesOf(store.services.exportChunks({}));
    expect(all).toHaveLength(BOOK);
    expect(all).toEqual(await listed({}));
    expect(await linesOf(store.services.exportChunks({ status: "suspended" }))).toEqual(await listed({ status: "suspended" }));
    expect(await linesOf(store.services.exportChunks({ q: "c42@EXAMPLE.com" }))).toEqual([expect.objectContaining({ service_id: "exp-00042" })]);
    expect(await linesOf(store.services.exportChunks({ q: "nobody" }))).toEqual([]);
  });

  it("ends when the caller leaves the loop, and the next export starts from the first licence", async () => {
    for await (const chunk of store.services.exportChunks({})) {
      expect(chunk.startsWith('{"service_id":"exp-00000"')).toBe(true);
      break;
    }
    expect(await linesOf(store.services.exportChunks({}))).toHaveLength(BOOK);
  });
});
