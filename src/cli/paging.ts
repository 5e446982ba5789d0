import type { Command } from "commander";
import type { Listing, Page, PageRequest } from "../store/store.js";
import { CliError, EXIT, type Output } from "./output.js";

/** The paging options every listing takes, as typed. */
export interface PagingOptions {
  limit?: string;
  cursor?: string;
  all?: boolean;
}

/** Adds `--limit`, `--cursor` and `--all` to a listing command. */
export function withPaging(cmd: Command): Command {
  return cmd
    .option("--limit <n>", "items per page, 1-1000 (default 100)")
    .option("--cursor <cursor>", "the page that begins here (next_cursor of the page before)")
    .option("--all", "every page, one after another (printed as each page is read)");
}

/** The page request of the options, checked as the admin API checks its query (a usage error, exit 2, names the option). */
export async function pageRequest(listing: Listing, opts: PagingOptions): Promise<PageRequest> {
  const { CURSOR_RULE, LIMIT_RULE, cursorSchema, limitSchema } = await import("../admin/paging.js");
  const limit = limitSchema.safeParse(opts.limit);
  if (!limit.success) throw new CliError(`--limit ${LIMIT_RULE}, got "${opts.limit}"`, EXIT.usage);
  const cursor = cursorSchema(listing).safeParse(opts.cursor);
  if (!cursor.success) throw new CliError(`--cursor ${CURSOR_RULE}, got "${opts.cursor}"`, EXIT.usage);
  return { limit: limit.data, ...(cursor.data ? { cursor: cursor.data } : {}) };
}

export interface ListingOutput<T> {
  /** The list's key in the JSON, as the admin API names it (`licenses`, `jobs`). */
  key: string;
  /** One page's items as a table, for people. */
  table(items: T[]): string;
  /** "licence(s)", "job(s)": what the counts count. */
  noun: string;
}

/**
 * Prints one page (`--limit`, `--cursor`) or, with `--all`, every page as it is read: the
 * items of one page are the most held at once, so an export of any size streams. The JSON is
 * the admin API's page object (`{"<key>": [...], "next_cursor", "total"}`); with `--all` one
 * such object whose list holds every item, written page by page, and `next_cursor` null.
 */
export async function printListing<T>(o: Output, opts: PagingOptions, first: PageRequest, read: (page: PageRequest) => Promise<Page<T>>, shape: ListingOutput<T>): Promise<void> {
  const { eachPage } = await import("../store/store.js");
  if (!opts.all) {
    const page = await read(first);
    if (o.json) return o.out(JSON.stringify({ [shape.key]: page.items, next_cursor: page.nextCursor, total: page.total }, null, 2));
    const more = page.nextCursor ? `; more: --cursor ${page.nextCursor} (or --all)` : "";
    return o.out([shape.table(page.items), `${page.items.length} of ${page.total} ${shape.noun}${more}`].join("\n"));
  }
  let printed = 0;
  let total = 0;
  if (o.json) o.out(`{"${shape.key}": [`);
  for await (const page of eachPage((cursor) => read({ limit: first.limit, ...(cursor ? { cursor } : first.cursor ? { cursor: first.cursor } : {}) }))) {
    total = page.total;
    if (o.json) {
      if (page.items.length) o.out(page.items.map((item, i) => `${printed + i === 0 ? "" : ","}${JSON.stringify(item)}`).join("\n"));
    } else if (page.items.length || printed === 0) {
      o.out(shape.table(page.items));
    }
    printed += page.items.length;
  }
  if (o.json) o.out(`], "next_cursor": null, "total": ${total}}`);
  else o.out(`${printed} ${shape.noun}`);
}
