import { newEventId } from "../ids.js";
import type { AcceptedItem, EventOps, EventRow, IntakeDecision, IntakeItem, IntakeView, StoredEvent } from "../ports/events.js";
import { LOCKS, queueLock, Rollback, type LockKey, type PgDb, type Tx } from "./database.js";
import type { PgAudit } from "./audit.js";
import type { PgJobs } from "./jobs.js";
import type { PgServices } from "./services.js";

/**
 * What an intake transaction must hold before it reads its view, for every item of the delivery:
 * - the delivery (source, webhook id): a repeated delivery waits and then finds the first one;
 * - the service and its queue: the row, its unfinished jobs and the jobs intake adds to them are
 *   judged and written by one intake at a time (a job handler's change of the row waits for the
 *   row lock; any enqueue into the queue waits for the queue lock);
 * - the IP an order or an IP change targets: two services cannot both be judged free to take it
 *   ("one licence, one service" across instances).
 * Intakes of unrelated services and IPs share no lock and commit side by side; a single lock for
 * every intake would be simpler and as correct, but would make every instance's intake wait for
 * one fsync after another.
 */
function intakeLocks(source: string, items: readonly IntakeItem[]): LockKey[] {
  return items.flatMap((item) => [
    { ns: LOCKS.webhook, key: JSON.stringify([source, item.webhookId]) },
    { ns: LOCKS.service, key: item.event.service.id },
    queueLock(item.queueKey),
    ...(item.ip ? [{ ns: LOCKS.ip, key: item.ip }] : []),
  ]);
}

/**
 * A delivery seen before: its event, or the key its event left when a prune deleted it
 * (migration 015), in one statement, so the look-up costs the round trip it always did. A prune
 * writes the key and deletes the event in one transaction: one snapshot sees one or the other.
 */
const SEEN = `SELECT id, type FROM events WHERE source = $1 AND webhook_id = $2
  UNION ALL SELECT event_id, type FROM webhook_keys WHERE source = $1 AND webhook_id = $2 LIMIT 1`;

/** The intake's transaction on PostgreSQL: one per delivery, committed (and flushed) before it resolves. */
export function pgEvents(db: PgDb, services: PgServices, jobs: PgJobs, audit: PgAudit): EventOps {
  async function acceptOne<R, E extends StoredEvent>(t: Tx, source: string, item: IntakeItem<E>, decide: (item: IntakeItem<E>, view: IntakeView) => IntakeDecision<R>): Promise<AcceptedItem<R>> {
    const [dup] = await t.q<{ id: string; type: string }>(SEEN, [source, item.webhookId]);
    if (dup) return { duplicate: dup.id, type: dup.type };
    const existing = await services.getForUpdate(t, item.event.service.id);
    const view: IntakeView = {
      existing,
      unfinished: existing ? await jobs.unfinishedIn(t, item.queueKey) : [],
      holders: item.ip ? await services.holdersIn(t, item.ip, item.event.service.id) : [],
    };
    const d = decide(item, view);
    if (!d.write) return { result: d.result };
    const now = await t.now();
    const eventId = newEventId(now);
    const [inserted] = await t.q<{ id: string }>(
      `INSERT INTO events (id, source, webhook_id, type, service_id, payload, received_at, outcome, detail)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (source, webhook_id) DO NOTHING RETURNING id`,
      [eventId, source, item.webhookId, d.event.type, d.event.serviceId, d.event.payload, now, d.event.outcome, d.event.detail],
    );
    if (!inserted) {
      // Only if the webhook lock was not held: then the other delivery won, and this one is its duplicate.
      const [first] = await t.q<{ id: string; type: string }>(SEEN, [source, item.webhookId]);
      return { duplicate: first!.id, type: first!.type };
    }
    if (d.order?.insert) await services.insertIn(t, { ...d.order.insert, order_event_id: eventId }, now);
    if (d.order?.update) await services.updateIn(t, d.event.serviceId, { ...d.order.update, order_event_id: eventId }, now);
    if (d.patch) await services.updateIn(t, d.event.serviceId, d.patch, now);
    if (d.history?.length) await services.historyIn(t, d.event.serviceId, d.history.map((h) => ({ ...h, event_id: eventId })), now);
    const jobId = d.job ? (await jobs.insert(t, [{ ...d.job, eventId }]))[0]!.id : undefined;
    if (item.audit) await audit.forChangeIn(t, [item.audit], d.event.serviceId, "ok", jobId ?? null);
    return { result: d.result, eventId, ...(jobId === undefined ? {} : { jobId }) };
  }

  return {
    async accept<R, E extends StoredEvent>(
      source: string,
      items: readonly IntakeItem<E>[],
      decide: (item: IntakeItem<E>, view: IntakeView) => IntakeDecision<R>,
      keep: (results: AcceptedItem<R>[]) => boolean,
    ) {
      return db.tx<{ stored: boolean; items: AcceptedItem<R>[] }>(async (t) => {
        await t.lock(intakeLocks(source, items));
        const out: AcceptedItem<R>[] = [];
        for (const item of items) out.push(await acceptOne(t, source, item, decide));
        // A rule refused one of several: nothing of the delivery is stored.
        if (!keep(out)) return new Rollback({ stored: false, items: out });
        return { stored: true, items: out };
      });
    },
    async get(eventId) {
      // Not `SELECT *`: `seq` is PostgreSQL's own column.
      const [row] = await db.q<EventRow>(
        "SELECT id, source, webhook_id, type, service_id, payload, received_at, outcome, detail FROM events WHERE id = $1",
        [eventId],
      );
      return row;
    },
  };
}
