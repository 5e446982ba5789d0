import { on } from "node:events";
import { extname } from "node:path";
import { Worker } from "node:worker_threads";
import { EXPORT_PAGE, exportByPages } from "../license-export.js";
import type { ServiceOps } from "../ports/services.js";
import type { Db } from "./database.js";
import type { ExportChunk, ExportWorkerData } from "./export-worker.js";
import type { SqliteListings } from "./listings.js";
import { countingSemaphore, type Semaphore } from "./semaphore.js";

/**
 * Export workers running at once in this process; an export beyond them waits its turn (it
 * neither fails nor reads on the event loop). Each worker is a thread with a V8 heap and a Node
 * environment of its own (about 11 MB before it reads a page) and a SQLite connection with its
 * own page cache, and it reads and serialises as fast as a core lets it. The bridge is meant for
 * a small machine (two cores, a few hundred MB): without a cap, a few exports at once (a script
 * in a loop, a dashboard refreshing) would take its memory and both cores from the service.
 * Two lets one export run beside another rather than behind it.
 */
export const EXPORT_WORKERS = 2;

const workerPlaces = countingSemaphore(EXPORT_WORKERS);

/** Workers running and exports waiting for one, in this process (tests read it). */
export const exportWorkers: Pick<Semaphore, "held" | "waiting"> = workerPlaces;

/**
 * The licence export on SQLite. better-sqlite3 reads on the calling thread, so an export read
 * here would hold the event loop for every page and every line of JSON (bench:scale: /healthz
 * p99 2.5x its idle figure during an export of 100,000 licences, with pages of 100). It runs in
 * a worker thread instead, with its own read-only connection to the file (./export-worker.ts);
 * the main thread only hands its chunks to the client. A database in memory has no file for a
 * second connection to open: it is read here, page by page.
 */
export function sqliteExport(db: Db, listings: SqliteListings): ServiceOps["exportChunks"] {
  return (filter, options = {}) =>
    db.memory
      ? exportByPages(filter, async (query) => listings.licenses(query))
      : inWorker({ path: db.name, filter, pageSize: EXPORT_PAGE }, options.signal);
}

/**
 * The worker's chunks, one page in flight ahead of the caller: the worker reads the next page
 * while the caller writes this one, and never more, so a slow client holds two pages, not the
 * table. Leaving the loop (the client went away) or an error ends the worker. The worker starts
 * once a place is free (EXPORT_WORKERS); `signal` aborting while the export waits for one ends
 * it with the signal's reason, and no worker is started for it.
 */
async function* inWorker(data: ExportWorkerData, signal: AbortSignal | undefined): AsyncGenerator<string> {
  const release = await workerPlaces.acquire(signal);
  let worker: Worker;
  try {
    signal?.throwIfAborted();
    worker = startWorker(data);
  } catch (err) {
    release();
    throw err;
  }
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
    // The place is free once the thread has exited, so no more than EXPORT_WORKERS ever exist.
    await worker.terminate().finally(release);
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
