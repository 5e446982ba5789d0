import { eachPage, type Page } from "./paging.js";
import { licenseLines, type ServiceRow } from "./service-row.js";
import type { LicenseFilter, LicenseQuery } from "./ports/services.js";

/**
 * Licences per chunk of an export: one page read, one message from the SQLite export's worker,
 * one write to the client. Where the pages are read on the event loop (PostgreSQL's rows are
 * parsed there, a SQLite database with no file is read there), it is also what the loop is held
 * for between two turns: a page of PAGE_LIMIT.max (1,000) held it about 30 ms on SQLite at
 * 100,000 licences (bench:scale: /healthz p50 30 ms, p99 348 ms during the export); 100 a tenth.
 */
export const EXPORT_PAGE = 100;

/**
 * A millisecond's pause after each page an export reads on the event loop. With a page and its
 * total one statement, PostgreSQL's export took the loop back so soon after each page that the
 * service's other requests queued behind the next (bench:scale, 100,000 licences: /healthz p99
 * 1.8 to 2.0 times idle, export 4.2 s); with the pause, 1.3 times idle and 5.6 to 5.9 s.
 */
const PAUSE_MS = 1;
const pause = () => new Promise<void>((resolve) => setTimeout(resolve, PAUSE_MS));

/**
 * An export read page by page by the caller's thread, with a turn of the event loop between two
 * pages (`eachPage`): PostgreSQL, whose reads are network I/O, and a SQLite database in memory,
 * which no other connection can open.
 */
export async function* exportByPages(filter: LicenseFilter, read: (query: LicenseQuery) => Promise<Page<ServiceRow>>): AsyncGenerator<string> {
  for await (const page of eachPage((cursor) => read({ ...filter, limit: EXPORT_PAGE, cursor }))) {
    if (page.items.length > 0) yield licenseLines(page.items);
    await pause();
  }
}
