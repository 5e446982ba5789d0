import type { Clock } from "../../clock.js";
import { newEventId } from "../ids.js";
import type { AcceptedItem, EventOps, IntakeDecision, IntakeItem, IntakeView, StoredEvent } from "../ports/events.js";
import type { SqliteAudit } from "./audit.js";
import type { Db } from "./database.js";
import type { GroupCommit } from "./group-commit.js";
import type { SqliteJobs } from "./jobs.js";
import type { SqliteServices } from "./services.js";

/** Thrown inside the transaction to undo a delivery that a rule refused in part. */
class RolledBack<R> extends Error {
  constructor(readonly items: AcceptedItem<R>[]) {
    super("rolled back");
  }
}

/** The intake's transaction on SQLite: one savepoint in the group commit's transaction per delivery. */
export function sqliteEvents(db: Db, clock: Clock, group: GroupCommit, services: SqliteServices, jobs: SqliteJobs, audit: SqliteAudit): EventOps {
  // Prepared on first use: a store opened on a database not yet at migration 015 (the migration
  // tests') must still open, and has no webhook_keys for these statements to name.
  const statements = () => ({
    // A delivery seen before: its event, or the key its event left when a prune deleted it.
    find: db.prepare(
      `SELECT id, type FROM events WHERE source = @source AND webhook_id = @webhookId
       UNION ALL SELECT event_id, type FROM webhook_keys WHERE source = @source AND webhook_id = @webhookId LIMIT 1`,
    ),
    // A delivery seen before conflicts on (source, webhook_id), or finds its pruned event's key,
    // and writes nothing: the insert is the dedupe look-up, so a new delivery, nearly every one,
    // costs no SELECT of its own.
    insert: db.prepare(
      `INSERT INTO events (id, source, webhook_id, type, service_id, payload, received_at, outcome, detail)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM webhook_keys WHERE source = ? AND webhook_id = ?)
       ON CONFLICT (source, webhook_id) DO NOTHING`,
    ),
  });
  let prepared: ReturnType<typeof statements> | undefined;
  const st = () => (prepared ??= statements());
  const findEvent = (source: string, webhookId: string) => st().find.get({ source, webhookId }) as { id: string; type: string } | undefined;
  const byId = db.prepare("SELECT * FROM events WHERE id = ?");

  function acceptOne<R, E extends StoredEvent>(source: string, item: IntakeItem<E>, decide: (item: IntakeItem<E>, view: IntakeView) => IntakeDecision<R>): AcceptedItem<R> {
    // The decision is made before the delivery is known to be new (pure, and its reads are the
    // transaction's), but a duplicate's answer is always "duplicate", whatever it decided.
    const existing = services.getSync(item.event.service.id);
    const view: IntakeView = {
      existing,
      unfinished: existing ? jobs.unfinishedSync(item.queueKey) : [],
      holders: item.ip ? services.holdersSync(item.ip, item.event.service.id) : [],
    };
    const d = decide(item, view);
    if (!d.write) {
      const dup = findEvent(source, item.webhookId);
      return dup ? { duplicate: dup.id, type: dup.type } : { result: d.result };
    }
    const now = clock.now();
    const eventId = newEventId(now);
    const e = d.event;
    if (st().insert.run(eventId, source, item.webhookId, e.type, e.serviceId, e.payload, now, e.outcome, e.detail, source, item.webhookId).changes === 0) {
      const dup = findEvent(source, item.webhookId)!;
      return { duplicate: dup.id, type: dup.type };
    }
    if (d.order?.insert) services.insertSync({ ...d.order.insert, order_event_id: eventId }, now);
    if (d.order?.update) services.updateSync(d.event.serviceId, { ...d.order.update, order_event_id: eventId }, now);
    if (d.patch) services.updateSync(d.event.serviceId, d.patch, now);
    for (const h of d.history ?? []) services.addHistorySync(d.event.serviceId, { ...h, event_id: eventId }, now);
    const jobId = d.job ? jobs.enqueueSync({ ...d.job, eventId }).id : undefined;
    if (item.audit) audit.forChangeSync([item.audit], d.event.serviceId, "ok", jobId ?? null, now);
    return { result: d.result, eventId, ...(jobId === undefined ? {} : { jobId }) };
  }

  return {
    async accept(source, items, decide, keep) {
      try {
        const accepted = await group.run(() => {
          const out = items.map((item) => acceptOne(source, item, decide));
          if (!keep(out)) throw new RolledBack(out);
          return out;
        });
        return { stored: true, items: accepted };
      } catch (err) {
        if (err instanceof RolledBack) return { stored: false, items: err.items as never };
        throw err;
      }
    },
    async get(eventId) {
      return byId.get(eventId) as Awaited<ReturnType<EventOps["get"]>>;
    },
  };
}
