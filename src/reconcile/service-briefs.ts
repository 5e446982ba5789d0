import { yieldToEventLoop, type ServiceBrief, type Store } from "../store/store.js";

/** Services read per page: one short index range each (a SQLite read runs on the event loop). */
export const BRIEF_PAGE = 1000;

/**
 * Every service the bridge has, as briefs (the columns reconcile and the adoption plan compare),
 * read a page at a time by service id with a turn of the event loop between two pages: never
 * the whole table in one read, never a full row held.
 */
export async function readServiceBriefs(store: Pick<Store, "services">): Promise<ServiceBrief[]> {
  const all: ServiceBrief[] = [];
  const shared = new Map<string, string>();
  let after: string | undefined;
  for (;;) {
    const page = await store.services.briefs(after, BRIEF_PAGE);
    for (const row of page) all.push(compact(row, shared));
    if (page.length < BRIEF_PAGE) return all;
    after = page[page.length - 1]!.service_id;
    await yieldToEventLoop();
  }
}

/**
 * The row as one object of a fixed shape (a driver's row object grows its properties one by
 * one), its words (kind, type, status, product, variants: a handful of values across the book)
 * one string each: a book of 100,000 services takes about a quarter less memory (22 MB, not 30).
 */
function compact(row: ServiceBrief, shared: Map<string, string>): ServiceBrief {
  const word = <T extends string | null>(value: T): T => {
    if (value === null) return value;
    const known = shared.get(value);
    if (known !== undefined) return known as T;
    shared.set(value, value);
    return value;
  };
  return {
    service_id: row.service_id,
    kind: word(row.kind),
    type: word(row.type),
    bundle: word(row.bundle),
    bundle_key: row.bundle_key,
    variant: word(row.variant),
    upstream_variant: word(row.upstream_variant),
    ip: row.ip,
    status: word(row.status),
    expires_at: row.expires_at,
    updated_at: row.updated_at,
    provider: word(row.provider),
    sku: word(row.sku),
    upstream_id: row.upstream_id,
  };
}
