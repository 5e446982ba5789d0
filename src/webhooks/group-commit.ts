import type { GroupCommit } from "../store/group-commit.js";
import type { Intake, IntakeItem, IntakeResult } from "./intake.js";

/** Accepts the events of one delivery; resolves once they are committed and fsynced. */
export type AcceptEvents = (source: string, items: readonly IntakeItem[]) => Promise<IntakeResult[]>;

/**
 * The intake behind group commit: each request is answered only after its events are committed
 * and fsynced, together with whatever else arrived in the same turn of the event loop.
 */
export function groupCommit(intake: Intake, group: GroupCommit): AcceptEvents {
  return (source, items) => group.run(() => intake(source, items));
}
