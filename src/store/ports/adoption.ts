import type { ServiceRow } from "../service-row.js";
import type { AuditDraft } from "./audit.js";
import type { NewHistory, NewJob, NewService } from "./writes.js";

/**
 * A service taken over as its provider holds it: its status, expiry, variant and bundle key from
 * the licence list (and the provider's id of the licence, where its list has one).
 */
export type AdoptedService = NewService & { expires_at: number | null; upstream_variant: string | null; bundle_key: string | null; companions: string };

export interface AdoptionWrite {
  service: AdoptedService;
  history: NewHistory[];
  /** Jobs queued with the row (the install mail, when the operator asks for it). */
  enqueue?: NewJob[];
}

export interface AdoptionOps {
  /**
   * Writes one batch of adopted services in one transaction: each a new row with its history,
   * unless the bridge has that service already (`known`: another run, or an order, came first)
   * or `refuse`, given the other services that hold its IP now or will once a queued IP change is
   * applied (read inside the transaction), says why not (`refused`). Nothing else is written: no
   * event, and no job but those the write names. A batch committed stays; a later run finds those services known.
   */
  insert(
    batch: readonly AdoptionWrite[],
    refuse: (write: AdoptionWrite, holders: readonly ServiceRow[]) => string | undefined,
    /** The operator's action: an entry (outcome ok) for each service written, in the batch's transaction. */
    audit?: AuditDraft,
  ): Promise<{ inserted: string[]; known: string[]; refused: { service_id: string; reason: string }[] }>;
}
