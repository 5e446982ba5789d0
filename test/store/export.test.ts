import { beforeEach, expect, it } from "vitest";
import { printListing } from "../../src/cli/paging.js";
import type { Output } from "../../src/cli/output.js";
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
