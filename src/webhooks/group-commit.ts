import type { Db } from "../store/database.js";
import { withFullSync } from "../store/durable.js";
import type { BillingEvent } from "./event-schema.js";
import type { IntakeResult } from "./intake.js";

export type AcceptEvent = (source: string, webhookId: string, event: BillingEvent) => IntakeResult;
export type AcceptEventAsync = (source: string, webhookId: string, event: BillingEvent) => Promise<IntakeResult>;

/**
 * Group commit: the events that arrive within one turn of the event loop are written in one
 * transaction and one fsync, and each request is answered only after that commit. Each event
 * runs in its own savepoint (`accept` is a better-sqlite3 transaction, nested here), so one
 * that throws is rolled back alone. Durable 202s at the speed of many requests per fsync.
 */
export function groupCommit(db: Db, accept: AcceptEvent): AcceptEventAsync {
  type Item = { args: Parameters<AcceptEvent>; resolve: (r: IntakeResult) => void; reject: (e: unknown) => void };
  let pending: Item[] = [];
  let scheduled = false;

  const writeAll = db.transaction((batch: Item[]) =>
    batch.map((item) => {
      try {
        return { ok: true as const, result: accept(...item.args) };
      } catch (error) {
        return { ok: false as const, error };
      }
    }),
  );

  const flush = () => {
    scheduled = false;
    const batch = pending;
    pending = [];
    let outcomes;
    try {
      outcomes = withFullSync(db, () => writeAll.immediate(batch));
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    outcomes.forEach((o, i) => (o.ok ? batch[i]!.resolve(o.result) : batch[i]!.reject(o.error)));
  };

  return (...args) =>
    new Promise<IntakeResult>((resolve, reject) => {
      pending.push({ args, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
