import type { Job } from "../jobs/types.js";
import type { Db } from "../store/database.js";

/** Marks the event a job served as applied (or failed), for the event history. */
export function eventOutcome(db: Db, job: Job, outcome: "applied" | "failed" | "skipped", detail: string | null): void {
  if (!job.eventId) return;
  db.prepare("UPDATE events SET outcome = ?, detail = ? WHERE id = ?").run(outcome, detail, job.eventId);
}

export function isoToMs(iso: string | undefined): number | undefined {
  if (!iso) return undefined;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Calendar months later, as the upstream counts its terms. */
export function addMonths(ms: number, months: number): number {
  const d = new Date(ms);
  const day = d.getUTCDate();
  d.setUTCMonth(d.getUTCMonth() + months);
  // 31 Jan + 1 month is the end of February, not 3 March.
  if (d.getUTCDate() < day) d.setUTCDate(0);
  return d.getTime();
}
