import type { Job } from "../../vocabulary/jobs.js";
import type { ServiceRow } from "../service-row.js";
import type { AuditDraft } from "./audit.js";
import type { EventOutcome, NewHistory, NewJob, NewService, ServicePatch } from "./writes.js";

/** What the intake needs to know to judge one event, read inside its transaction. */
export interface IntakeView {
  existing: ServiceRow | undefined;
  /** The service's unfinished jobs (queued, running, blocked), in queue order. */
  unfinished: Job[];
  /** Other services that hold, or will hold, a licence at the event's IP (service.ip or changes.ip). */
  holders: ServiceRow[];
}

/** The intake's decision about one event: its answer and what to write. */
export type IntakeDecision<R> =
  | { write: false; result: R }
  | {
      write: true;
      result: R;
      event: { type: string; serviceId: string; payload: string; outcome: EventOutcome | null; detail: string | null };
      /** The service row this event (re)creates. */
      order?: { insert?: NewService; update?: ServicePatch };
      /** Other columns of an existing service, e.g. ip_changes + 1. */
      patch?: ServicePatch;
      /** History entries of the service, written with the event (naming it). */
      history?: NewHistory[];
      job?: NewJob;
    };

/** What the store reads of an event: the service it is about (the rest is the deciding core's). */
export interface StoredEvent {
  type: string;
  service: { id: string };
}

export interface IntakeItem<E extends StoredEvent = StoredEvent> {
  webhookId: string;
  event: E;
  /** The queue of the event's service, whose unfinished jobs the view shows. */
  queueKey: string;
  /** The IP whose other holders the view shows (the order's, or the IP change's target). */
  ip: string | undefined;
  /** An operator's action (the console, the admin API): its entry (ok, with the job) is written with the event. */
  audit?: AuditDraft;
}

/**
 * `duplicate`: the id of the event first accepted under the same (source, webhook id), and its
 * `type` (a source whose type rests on an unsigned input compares it with its own), whether the
 * event is still stored or a prune left only its key.
 */
export type AcceptedItem<R> = { duplicate: string; type: string } | { result: R; eventId?: string; jobId?: number };

/** One received event as stored: where it came from, and what came of it. */
export interface EventRow {
  id: string;
  /** The panel (or API) it came through; with `webhook_id`, what makes a delivery a duplicate. */
  source: string;
  webhook_id: string;
  type: string;
  service_id: string;
  /** The event as JSON. */
  payload: string;
  received_at: number;
  /** Null until its job has run (or for an event that needs none). */
  outcome: EventOutcome | null;
  detail: string | null;
}

export interface EventOps {
  /**
   * Accepts one delivery's events durably (the commit is fsynced before this resolves): each is
   * a duplicate of an event seen before under (source, webhook id) (its row, or the key a prune
   * left of it in webhook_keys: a delivery is a duplicate for ever), or judged by `decide` with
   * the view read inside the transaction. When `keep` says no (a rule refused one of several),
   * nothing is stored (`stored: false`). Results carry the new event id and job id.
   */
  accept<R, E extends StoredEvent>(
    source: string,
    items: readonly IntakeItem<E>[],
    decide: (item: IntakeItem<E>, view: IntakeView) => IntakeDecision<R>,
    keep: (results: AcceptedItem<R>[]) => boolean,
  ): Promise<{ stored: boolean; items: AcceptedItem<R>[] }>;
  /** The event as stored; undefined once a prune deleted it (its key stays: see accept). */
  get(eventId: string): Promise<EventRow | undefined>;
}
