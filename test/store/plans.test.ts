import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/clock.js";
import { PLANNED_READS, type PlannedRead, type Store } from "../../src/store/store.js";
import { planProblems } from "../helpers/plans.js";
import { STORE_FACTORIES, type OpenedStore } from "../helpers/stores.js";

// Issue 25: at 70,000 services and 90,000 jobs every read that scanned a table stalled the
// service (SQLite reads run on the event loop). Each read a request or a scrape makes is an
// index range, or a few counter rows: asked of the databases themselves, as the sweep's is
// (test/renewals). On PostgreSQL sequential scans are priced out, so a plan shows whether an
// index can serve the read at all, whatever the planner would pick for a table this small.

/** The index each read goes through (SQLite's name | PostgreSQL's, where they differ). */
const USES: Record<PlannedRead, RegExp[]> = {
  licenses: [/sqlite_autoindex_services_1|services_pkey/],
  "licenses by status": [/services_status_list/],
  // Issue 36: one range per status of (provider, status, service_id), merged.
  "licenses by provider": [/services_provider_list/],
  "licenses by provider and status": [/services_provider_list/],
  "licenses search": [/services_ip/, /services_email/, /services_license_key/, /sqlite_autoindex_services_1|services_pkey/],
  "licenses search by status": [/services_ip/, /services_email/, /services_license_key/],
  "licenses search by provider": [/services_ip/, /services_email/, /services_license_key/],
  "licenses total": [/service_counts/],
  "licenses total by status": [/service_counts/],
  "licenses total by provider": [/service_counts/],
  "licenses search total": [/services_ip/, /services_email/, /services_license_key/],
  jobs: [/INTEGER PRIMARY KEY|jobs_pkey/],
  "jobs by state": [/jobs_state_list/],
  "jobs by kind": [/jobs_kind_list/],
  "jobs by kind and state": [/jobs_kind_list/],
  "jobs by service": [/jobs_service/],
  "jobs total": [/job_counts/],
  "jobs total by service": [/jobs_service/],
  history: [/events_service/, /history_service/],
  "history total": [/events_service/, /history_service/],
  "service briefs": [/sqlite_autoindex_services_1|services_pkey/],
  // Issue 36: before an order adopts a licence found at its IP, who records its id (migration 017).
  "services by licence id": [/services_upstream_id/],
  "job counts": [/job_counts/],
  "oldest due job": [/jobs_runnable/],
};

/** A search's matches are a handful per key (one service per id or licence key, the few at an IP or of a customer): sorting them is no scan. */
const SORTS_FEW = new Set<PlannedRead>(["licenses search", "licenses search by status", "licenses search by provider", "licenses search total"]);

describe.each(STORE_FACTORIES)("the plans of the reads on $name", (factory) => {
  if (factory.skip) {
    it.skip(`skipped: ${factory.skip}`, () => {});
    return;
  }

  let opened: OpenedStore;
  let store: Store;
  beforeAll(async () => {
    opened = await factory.open({ clock: manualClock(Date.UTC(2026, 0, 1)) });
    store = opened.store;
  });
  afterAll(async () => {
    await opened?.close();
  });

  it.each(PLANNED_READS)("%s: an index range, no scan of a growing table, no sort of one", async (read) => {
    const plan = await store.explain(read);
    const text = plan.join("\n");
    const { scans, sorts } = planProblems(store.dialect, plan);
    expect(scans, text).toEqual([]);
    if (!SORTS_FEW.has(read)) expect(sorts, text).toEqual([]);
    for (const index of USES[read]) expect(text).toMatch(index);
  });
});

describe("the plan checks, on the reads of the release before (issue 25)", () => {
  // What SQLite and PostgreSQL planned for the job gauge and the status listing before
  // migration 008: the checks above must fail them.
  it("find the /metrics job gauge's scan of every job", () => {
    expect(planProblems("sqlite", ["SCAN jobs USING COVERING INDEX jobs_runnable"]).scans).toHaveLength(1);
    const pg = ["HashAggregate  (cost=1.00..2.00 rows=5 width=40)", "  Group Key: state", "  ->  Index Only Scan using jobs_runnable on jobs  (cost=0.29..2000.00 rows=90866 width=32)"];
    expect(planProblems("postgres", pg).scans).toHaveLength(1);
  });

  it("find the status listing's sort of every licence of the status", () => {
    const sqlite = planProblems("sqlite", ["SEARCH services USING INDEX services_due (status=?)", "USE TEMP B-TREE FOR ORDER BY"]);
    expect(sqlite).toEqual({ scans: [], sorts: [expect.stringContaining("services_due")] });
    const pg = [
      "Limit  (cost=9.00..9.01 rows=10000 width=600)",
      "  ->  Sort  (cost=9.00..9.50 rows=70148 width=600)",
      "        Sort Key: service_id COLLATE \"C\"",
      "        ->  Index Scan using services_due on services  (cost=0.29..8.00 rows=70148 width=600)",
      "              Index Cond: (status = 'active'::text)",
    ];
    expect(planProblems("postgres", pg)).toEqual({ scans: [], sorts: [expect.stringContaining("services_due")] });
  });

  it("let a page of a union of short ranges be sorted", () => {
    const pg = [
      "Limit  (cost=1.00..2.00 rows=101 width=400)",
      "  ->  Sort  (cost=1.00..2.00 rows=505 width=400)",
      "        ->  Append  (cost=0.29..1.00 rows=505 width=400)",
      "              ->  Limit  (cost=0.29..0.50 rows=101 width=400)",
      "                    ->  Index Scan Backward using jobs_kind_list on jobs  (cost=0.29..8.00 rows=1000 width=400)",
      "                          Index Cond: ((kind = 'renew'::text) AND (state = 'queued'::text) AND (id < '9'::bigint))",
    ];
    expect(planProblems("postgres", pg)).toEqual({ scans: [], sorts: [] });
  });
});
