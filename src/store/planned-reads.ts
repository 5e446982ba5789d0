/**
 * The reads whose plans test/store/plans.test.ts checks: each listing, search and total an
 * admin request or CLI page makes, what a /metrics scrape reads, and the services recording a
 * licence id, which an order reads before it adopts a licence. Every one must be an index
 * range (or a handful of counter rows), never a scan of a table that grows with the business.
 */
export const PLANNED_READS = [
  "licenses",
  "licenses by status",
  "licenses by provider",
  "licenses by provider and status",
  "licenses search",
  "licenses search by status",
  "licenses search by provider",
  "licenses total",
  "licenses total by status",
  "licenses total by provider",
  "licenses search total",
  "jobs",
  "jobs by state",
  "jobs by kind",
  "jobs by kind and state",
  "jobs by service",
  "jobs total",
  "jobs total by service",
  "history",
  "history total",
  "service briefs",
  "services by licence id",
  "job counts",
  "oldest due job",
] as const;
export type PlannedRead = (typeof PLANNED_READS)[number];
