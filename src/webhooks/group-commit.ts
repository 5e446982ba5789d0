import type { Db } from "../store/database.js";
import { createGroupCommit, type GroupCommit } from "../store/group-commit.js";
import type { BillingEvent } from "./event-schema.js";
import type { IntakeResult } from "./intake.js";

export type AcceptEvent = (source: string, webhookId: string, event: BillingEvent) => IntakeResult;
export type AcceptEventAsync = (source: string, webhookId: string, event: BillingEvent) => Promise<IntakeResult>;

/**
 * The intake behind group commit: each request is answered only after its event is committed
 * and fsynced, together with whatever else arrived in the same turn of the event loop.
 */
export function groupCommit(db: Db, accept: AcceptEvent, group: GroupCommit = createGroupCommit(db)): AcceptEventAsync {
  return (...args) => group.run(() => accept(...args));
}
