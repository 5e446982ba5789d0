import type { ServiceRow } from "../service-row.js";
import type { AuditDraft } from "./audit.js";
import type { NewJob } from "./writes.js";

export interface DueRenewal {
  service_id: string;
  expires_at: number;
}

/**
 * An active service whose term ends by a horizon, as the renewal queries read it through
 * `services_due (status, expires_at)`: what src/intake/renewal-due.ts needs to say whether its
 * term is due. The stores decide nothing about renewals beyond that read.
 */
export type RenewalCandidate = DueRenewal & Pick<ServiceRow, "status" | "paid_until">;

export type UpcomingRenewal = RenewalCandidate & Pick<ServiceRow, "product_id" | "provider" | "ip" | "kind" | "type" | "bundle" | "variant" | "upstream_variant" | "months">;

export interface RenewalOps {
  /**
   * In one transaction: every candidate whose term ends within `leadMs` of the store's clock
   * (all, or the one service) is handed to `job` with that clock's now; each job it returns (a
   * term it finds due) is enqueued, its unique key making a second sweep of the same term create
   * nothing. Answers the enqueued ones.
   */
  sweep(
    leadMs: number,
    job: (candidate: RenewalCandidate, now: number) => NewJob | undefined,
    serviceId?: string,
    audit?: AuditDraft,
  ): Promise<{ due: DueRenewal; id: number; created: boolean }[]>;
  /**
   * The candidates whose term ends by `horizon` (epoch ms), earliest first: what the forecast
   * asks the rule about. (`audit` above: an entry per renewal job a sweep an operator asked for queued.)
   */
  upcoming(horizon: number): Promise<UpcomingRenewal[]>;
  /**
   * Candidates ending within `withinMs` whose renewal job for that term was tried and has not
   * succeeded. `keyOf` names that job's unique key, or answers undefined for a term that is not
   * due (its job is not looked up).
   */
  atRisk(withinMs: number, keyOf: (candidate: RenewalCandidate) => string | undefined): Promise<(DueRenewal & { ip: string; job_id: number; state: string; last_error: string | null })[]>;
}
