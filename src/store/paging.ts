import { z } from "zod";

/**
 * Listings come in pages (service contract, section 4): `limit` items at most, a cursor to the
 * next page, and the total. Nothing is cut silently: a listing ends only where `nextCursor` is
 * null. The stores read a page with one index range from the cursor on, so a page costs the
 * same at the first item as at the millionth, and a page never waits for the rest.
 */
export const PAGE_LIMIT = {
  /** A page without a `limit`. */
  default: 100,
  /** The most one page holds; exports walk the pages (`eachPage`). */
  max: 1000,
} as const;

export interface PageRequest {
  /** 1 to PAGE_LIMIT.max. */
  limit: number;
  /** A `nextCursor` of the same listing (where the last page ended); absent for the first page. */
  cursor?: string;
}

export interface Page<T> {
  items: T[];
  /** Where the next page begins, or null: this is the last page. */
  nextCursor: string | null;
  /**
   * How many items match the filter, all pages together. Exact: read from counters the writes
   * keep (src/store/sqlite and postgres, migration 008), or counted in an index range that the
   * filter bounds (one service's jobs, a search's few matches).
   */
  total: number;
}

/**
 * The sort key a cursor carries, per listing, after a tag naming the listing (so a cursor of one
 * listing is refused by another):
 * - licences: by service id, ascending;
 * - jobs: by id, newest first (new jobs get higher ids, so a walk never meets one twice);
 * - history: newest first by time, then events before the history they caused, then id
 *   (src 0: a received event, 1: a history entry).
 */
const CURSOR_KEYS = {
  licenses: z.tuple([z.literal("l"), z.string().max(256)]),
  jobs: z.tuple([z.literal("j"), z.number().int().min(1).max(Number.MAX_SAFE_INTEGER)]),
  history: z.tuple([
    z.literal("h"),
    z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
    z.union([z.literal(0), z.literal(1)]),
    z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  ]),
} as const;

export type Listing = keyof typeof CURSOR_KEYS;
type Tagged<L extends Listing> = z.output<(typeof CURSOR_KEYS)[L]>;
type Untag<T> = T extends [unknown, ...infer Rest] ? Rest : never;
export type CursorKey<L extends Listing> = Untag<Tagged<L>>;

const TAGS: Record<Listing, string> = { licenses: "l", jobs: "j", history: "h" };

/** A cursor: base64url of the JSON of the tag and the key. Opaque to callers; stable across releases that keep the key. */
export function encodeCursor<L extends Listing>(listing: L, key: CursorKey<L>): string {
  return Buffer.from(JSON.stringify([TAGS[listing], ...key]), "utf8").toString("base64url");
}

/** The key a cursor of `listing` carries, or undefined for anything that is not one. */
export function decodeCursor<L extends Listing>(listing: L, cursor: string): CursorKey<L> | undefined {
  if (cursor.length > 1024 || !/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
  const parsed = CURSOR_KEYS[listing].safeParse(json);
  if (!parsed.success) return undefined;
  const key = (parsed.data as unknown[]).slice(1) as CursorKey<L>;
  // One spelling per key: base64url decoding skips what it cannot read, so "abc" and "ab=c" must not both pass.
  return encodeCursor(listing, key) === cursor ? key : undefined;
}

/** The key of `cursor` for a store that was handed one a route or the CLI had checked; a bad one is a bug. */
export function cursorKey<L extends Listing>(listing: L, cursor: string | undefined): CursorKey<L> | undefined {
  if (cursor === undefined) return undefined;
  const key = decodeCursor(listing, cursor);
  if (!key) throw new RangeError(`not a cursor of the ${listing} listing: ${cursor.slice(0, 64)}`);
  return key;
}

/** Gives the event loop a turn: timers, I/O and (SQLite) the writer go between two pages. */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Every page of a listing, in order, one read each, with a turn of the event loop between two
 * reads: an export of any size holds no long query (a SQLite read runs on the event loop) and
 * never more than a page in memory.
 */
export async function* eachPage<T>(read: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<Page<T>> {
  let cursor: string | undefined;
  for (;;) {
    const page = await read(cursor);
    yield page;
    if (page.nextCursor === null) return;
    cursor = page.nextCursor;
    await yieldToEventLoop();
  }
}
