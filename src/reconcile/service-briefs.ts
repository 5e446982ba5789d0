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
  let after: string | undefined;
  for (;;) {
    const page = await store.services.briefs(after, BRIEF_PAGE);
    for (const brief of page) all.push(brief);
    if (page.length < BRIEF_PAGE) return all;
    after = page[page.length - 1]!.service_id;
    await yieldToEventLoop();
  }
}
