import { on } from "node:events";
import { extname } from "node:path";
import { Worker } from "node:worker_threads";
import { EXPORT_PAGE, exportByPages } from "../license-export.js";
import type { LicenseFilter } from "../store.js";
import type { Db } from "./database.js";
import type { ExportChunk, ExportWorkerData } from "./export-worker.js";
import type { SqliteListings } from "./listings.js";

/**
 * The licence export on SQLite. better-sqlite3 reads on the calling thread, so an export read
 * here would hold the event loop for every page and every line of JSON (bench:scale: /healthz
 * p99 2.5x its idle figure during an export of 100,000 licences, with pages of 100). It runs in
 * a worker thread instead, with its own read-only connection to the file (./export-worker.ts);
 * the main thread only hands its chunks to the client. A database in memory has no file for a
 * second connection to open: it is read here, page by page.
 */
export function sqliteExport(db: Db, listings: SqliteListings): (filter: LicenseFilter) => AsyncIterable<string> {
  return (filter) =>
    db.memory ? exportByPages(filter, async (query) => listings.licenses(query)) : inWorker({ path: db.name, filter, pageSize: EXPORT_PAGE });
}

/**
 * The worker's chunks, one page in flight ahead of the caller: the worker reads the next page
 * while the caller writes this one, and never more, so a slow client holds two pages, not the
 * table. Leaving the loop (the client went away) or an error ends the worker.
 */
async function* inWorker(data: ExportWorkerData): AsyncGenerator<string> {
  const worker = startWorker(data);
  try {
    // Listening before the first request: a message that comes while the caller writes waits here.
    const answers = on(worker, "message", { close: ["exit"] }) as AsyncIterableIterator<[ExportChunk]>;
    worker.postMessage("next");
    for await (const [chunk] of answers) {
      if (!chunk.last) worker.postMessage("next");
      if (chunk.lines) yield chunk.lines;
      if (chunk.last) return;
    }
    throw new Error("the export's worker thread ended before the last page");
  } finally {
    await worker.terminate();
  }
}

/**
 * The worker's module is the file beside this one, in the form this one runs in: .ts from src/
 * (tests, tsx), .js from tsc's dist/ (the benchmarks), .mjs from dist/bundle/ (what `npm start`
 * runs: scripts/bundle-cli.mjs makes the worker an entry point of its own there).
 */
function startWorker(workerData: ExportWorkerData): Worker {
  const here = new URL(import.meta.url);
  const ext = extname(here.pathname);
  const entry = new URL(`./export-worker${ext}`, here);
  if (ext !== ".ts") return new Worker(entry, { workerData });
  // Node runs no TypeScript, and a worker does not inherit the loader of the thread that starts
  // it: from src/ it registers tsx (a devDependency, there wherever src/ runs) before its entry.
  const tsx = import.meta.resolve("tsx/esm/api");
  const boot = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(boot, { eval: true, workerData });
}
