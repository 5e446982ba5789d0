/**
 * A read that callers at the same moment share: while one is under way, another call gets its
 * answer instead of starting a second; a call after it ended reads again. prom-client collects
 * every gauge of a scrape at once, so the gauges fed by one read (store.gauges()) cost one read
 * per scrape, and nothing is kept from one scrape to the next.
 */
export function sharedRead<T>(read: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () => {
    if (running) return running;
    const started = read().finally(() => {
      if (running === started) running = undefined;
    });
    running = started;
    return started;
  };
}
