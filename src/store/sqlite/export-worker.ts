// The SQLite export's worker thread (started by ./export.ts): its own read-only connection to the
// service's file, one page of licences read and written as NDJSON each time the main thread asks,
// so neither the reads nor the JSON run on the service's event loop. WAL lets this connection
// read beside the service's writer; each page is a statement of its own, as the API's pages are,
// so no read transaction holds back the WAL's checkpoints while a slow client takes its time.
import { parentPort, workerData } from "node:worker_threads";
import { licenseLines } from "../service-row.js";
import type { LicenseFilter } from "../ports/services.js";
import { openDatabase } from "./database.js";
import { sqliteListings } from "./listings.js";

/** What the worker is started with. */
export interface ExportWorkerData {
  /** The database file the service has open. */
  path: string;
  filter: LicenseFilter;
  pageSize: number;
}

/**
 * The worker's answer to each message of the main thread (any message asks for the next page):
 * that page's lines, and whether it was the last.
 */
export interface ExportChunk {
  lines: string;
  last: boolean;
}

const port = parentPort!;
const { path, filter, pageSize } = workerData as ExportWorkerData;
const db = openDatabase(path, { readonly: true, fileMustExist: true });
const listings = sqliteListings(db);
let cursor: string | undefined;

port.on("message", () => {
  const page = listings.licenses({ ...filter, limit: pageSize, cursor });
  const last = page.nextCursor === null;
  cursor = page.nextCursor ?? undefined;
  port.postMessage({ lines: licenseLines(page.items), last } satisfies ExportChunk);
  if (last) {
    db.close();
    port.close();
  }
});
