import { JOB_STATES } from "../../vocabulary/jobs.js";
import { SERVICE_STATUSES } from "../../vocabulary/service-statuses.js";
import { toJob, type JobRow } from "../job-row.js";
import { cursorKey, encodeCursor, type Page, type PageRequest } from "../paging.js";
import { BRIEF_COLUMNS, cut, historyBounds, historyRow, jobParams, licenseParams, plannedReads, TOP, type HistoryPageRow, type JobShape, type LicenseShape } from "../listing-reads.js";
import type { HistoryRow, LicenseQuery, ServiceBrief } from "../ports/services.js";
import type { JobQuery } from "../ports/jobs.js";
import type { ServiceRow } from "../service-row.js";
import type { ProviderName } from "../../vocabulary/provider-names.js";
import { Rollback, type PgDb, type Tx } from "./database.js";
import type { TallyFolds } from "./tallies.js";

/**
 * The listings on PostgreSQL, as on SQLite (src/store/sqlite/listings.ts, which explains the
 * reads): a page is one index range from the cursor on; totals come from the counters and their
 * change log (./tallies.ts) or from a range the filter bounds. A page and its total are one
 * statement (`withTotal`): one snapshot and one round trip, with no transaction around it.
 */

/** SQL written with @names, sent with $n: each name one parameter, however often it is used. */
export function positional(sql: string, params: Record<string, unknown>): [string, unknown[]] {
  const names: string[] = [];
  const text = sql.replace(/@(\w+)/g, (_, name: string) => {
    let i = names.indexOf(name);
    if (i < 0) i = names.push(name) - 1;
    return `$${i + 1}`;
  });
  return [text, names.map((n) => params[n] ?? null)];
}

const SEARCH = `SELECT service_id FROM services WHERE service_id = @q::text
  UNION SELECT service_id FROM services WHERE ip = @ip::text
  UNION SELECT service_id FROM services WHERE lower(customer_email) = lower(@q::text)
  UNION SELECT service_id FROM services WHERE license_key = @q::text`;


function licensesSql(f: LicenseShape): string {
  const order = "ORDER BY service_id LIMIT @limit::int";
  // By provider alone: one short range of (provider, status, service_id) per status, merged.
  if (f.provider && !f.status && !f.q) {
    const branch = (status: string) => `(SELECT * FROM services WHERE provider = @provider::text AND status = '${status}' AND service_id > @after::text ${order})`;
    return `${SERVICE_STATUSES.map(branch).join(" UNION ALL ")} ${order}`;
  }
  return `SELECT * FROM services WHERE ${["service_id > @after::text", ...licenseFilters(f)].join(" AND ")} ${order}`;
}

/**
 * The filters of a licence listing. A search is its few matches: the provider is then checked
 * row by row, written (`|| ''`) so that the planner cannot take the provider's range instead.
 */
function licenseFilters(f: LicenseShape): string[] {
  return [
    ...(f.status ? ["status = @status::text"] : []),
    ...(f.provider ? [`${f.q ? "provider || ''" : "provider"} = @provider::text`] : []),
    ...(f.q ? [`service_id IN (${SEARCH})`] : []),
  ];
}

/** A counter's value: its row plus what the change log holds beyond it, read in one snapshot. */
const tally = (counters: string, changes: string, where: string) =>
  `SELECT COALESCE(SUM(n), 0)::bigint AS n FROM (SELECT n FROM ${counters} ${where} UNION ALL SELECT n FROM ${changes} ${where}) c`;

function licensesTotalSql(f: LicenseShape): string {
  if (f.q) return `SELECT COUNT(*) AS n FROM services WHERE ${licenseFilters(f).join(" AND ")}`;
  const where = [...(f.status ? ["status = @status::text"] : []), ...(f.provider ? ["provider = @provider::text"] : [])];
  return tally("service_counts", "service_count_changes", where.length ? `WHERE ${where.join(" AND ")}` : "");
}


function jobsSql(f: JobShape): string {
  const order = "ORDER BY id DESC LIMIT @limit::int";
  if (f.kind && !f.state && !f.service) {
    const branch = (state: string) => `(SELECT * FROM jobs WHERE kind = @kind::text AND state = '${state}' AND id < @before::bigint ${order})`;
    return `${JOB_STATES.map(branch).join(" UNION ALL ")} ${order}`;
  }
  return `SELECT * FROM jobs WHERE ${["id < @before::bigint", ...jobFilters(f)].join(" AND ")} ${order}`;
}

/**
 * The filters of a job listing. By service, the service's own range of jobs_service: its state
 * and kind are then checked row by row, written (`|| ''`) so that the planner cannot take a
 * state's or a kind's range instead, which may hold every job of the queue.
 */
function jobFilters(f: JobShape): string[] {
  const column = (name: string) => (f.service ? `${name} || ''` : name);
  return [
    ...(f.service ? ["service_id = @service::text"] : []),
    ...(f.state ? [`${column("state")} = @state::text`] : []),
    ...(f.kind ? [`${column("kind")} = @kind::text`] : []),
  ];
}

function jobsTotalSql(f: JobShape): string {
  if (f.service) return `SELECT COUNT(*) AS n FROM jobs WHERE ${jobFilters(f).join(" AND ")}`;
  const where = [...(f.state ? ["state = @state::text"] : []), ...(f.kind ? ["kind = @kind::text"] : [])];
  return tally("job_counts", "job_count_changes", where.length ? `WHERE ${where.join(" AND ")}` : "");
}

/** Newest first, by (at, src, id), as on SQLite; seq is the events' order. */
const HISTORY_SQL = `SELECT src, id, service_id, at, event_id, job_id, action, detail FROM (
    (SELECT 0 AS src, seq AS id, service_id, received_at AS at, id AS event_id, NULL::bigint AS job_id,
            'received ' || type AS action, detail
     FROM events WHERE service_id = @id::text AND (received_at, seq) < (@eventAt::bigint, @eventId::bigint)
     ORDER BY received_at DESC, seq DESC LIMIT @limit::int)
    UNION ALL
    (SELECT 1 AS src, id, service_id, at, event_id, job_id, action, detail
     FROM history WHERE service_id = @id::text AND (at, id) < (@historyAt::bigint, @historyId::bigint)
     ORDER BY at DESC, id DESC LIMIT @limit::int)) h
  ORDER BY at DESC, src DESC, id DESC LIMIT @limit::int`;

const HISTORY_TOTAL_SQL =
  "SELECT (SELECT COUNT(*) FROM events WHERE service_id = @id::text) + (SELECT COUNT(*) FROM history WHERE service_id = @id::text) AS n";

const BRIEFS_SQL = `SELECT ${BRIEF_COLUMNS} FROM services WHERE service_id > @after::text ORDER BY service_id LIMIT @limit::int`;

/** Through services_upstream_id (migration 017), as on SQLite. */
const LICENCE_HOLDERS_SQL = "SELECT * FROM services WHERE provider = @provider::text AND upstream_id = @upstreamId::text AND status <> 'terminated' ORDER BY service_id";

/**
 * A page with its total in each row, in one statement: the total is a subquery that does not
 * depend on the row, so it is read once. The page's own order is kept (the outer ORDER BY is
 * the subquery's, which the planner knows it has). An empty page has no row to carry the total:
 * `page` below reads it on its own then.
 */
const withTotal = (page: string, total: string, order: string) => `SELECT p.*, (${total}) AS page_total FROM (${page}) p ORDER BY ${order}`;

const licensesPageSql = (f: LicenseShape) => withTotal(licensesSql(f), licensesTotalSql(f), "p.service_id");
const jobsPageSql = (f: JobShape) => withTotal(jobsSql(f), jobsTotalSql(f), "p.id DESC");
const HISTORY_PAGE_SQL = withTotal(HISTORY_SQL, HISTORY_TOTAL_SQL, "p.at DESC, p.src DESC, p.id DESC");

export function pgListings(db: PgDb, folds: TallyFolds) {
  const q = <R>(t: Pick<Tx, "q">, sql: string, params: Record<string, unknown>) => t.q<R>(...positional(sql, params));
  /**
   * A page and its total: one statement on the pool, with no transaction around it (one
   * statement is one snapshot); two when the page is empty (past the last row, or no match).
   */
  const page = async <R>(pageSql: string, totalSql: string, params: Record<string, unknown>): Promise<{ rows: R[]; total: number }> => {
    const rows = await q<R & { page_total: number }>(db, pageSql, params);
    if (rows.length === 0) return { rows: [], total: (await q<{ n: number }>(db, totalSql, params))[0]!.n };
    return { rows: rows.map(({ page_total: _total, ...row }) => row as R), total: rows[0]!.page_total };
  };

  // The planned reads are the statements a listing runs: its page with its total.
  const planned = plannedReads({ licenses: licensesPageSql, licensesTotal: licensesTotalSql, jobs: jobsPageSql, jobsTotal: jobsTotalSql, history: HISTORY_PAGE_SQL, historyTotal: HISTORY_TOTAL_SQL, briefs: BRIEFS_SQL, licenceHolders: LICENCE_HOLDERS_SQL });

  return {
    async licenses(query: LicenseQuery): Promise<Page<ServiceRow>> {
      const { shape, params } = licenseParams(query);
      const after = cursorKey("licenses", query.cursor)?.[0] ?? "";
      const { rows, total } = await page<ServiceRow>(licensesPageSql(shape), licensesTotalSql(shape), { ...params, after, limit: query.limit + 1 });
      if (!shape.q) folds.due();
      return cut(rows, query.limit, (r) => encodeCursor("licenses", [r.service_id]), (r) => r, total);
    },
    async jobs(query: JobQuery): Promise<Page<ReturnType<typeof toJob>>> {
      const { shape, params } = jobParams(query);
      const before = cursorKey("jobs", query.cursor)?.[0] ?? TOP;
      const { rows, total } = await page<JobRow>(jobsPageSql(shape), jobsTotalSql(shape), { ...params, before, limit: query.limit + 1 });
      if (!shape.service) folds.due();
      return cut(rows, query.limit, (r) => encodeCursor("jobs", [r.id]), toJob, total);
    },
    async history(serviceId: string, request: PageRequest): Promise<Page<HistoryRow>> {
      const bounds = historyBounds(cursorKey("history", request.cursor));
      const { rows, total } = await page<HistoryPageRow>(HISTORY_PAGE_SQL, HISTORY_TOTAL_SQL, { id: serviceId, ...bounds, limit: request.limit + 1 });
      return cut(rows, request.limit, (r) => encodeCursor("history", [r.at, r.src, r.id]), historyRow, total);
    },
    briefs(after: string | undefined, limit: number): Promise<ServiceBrief[]> {
      return q<ServiceBrief>(db, BRIEFS_SQL, { after: after ?? "", limit });
    },
    licenceHolders(provider: ProviderName, upstreamId: string): Promise<ServiceRow[]> {
      return q<ServiceRow>(db, LICENCE_HOLDERS_SQL, { provider, upstreamId });
    },
    planned,
    /**
     * EXPLAIN of a planned read with sequential scans, bitmap scans and sorts priced out: on a
     * small test database without statistics the planner would scan or sort anything, so the
     * plan shows instead whether an index can serve the read at all, in the order it returns
     * it. A full scan or a sort that remains is the only way the planner has.
     */
    explain(sql: string, values: unknown[]): Promise<string[]> {
      return db.tx(async (t) => {
        await t.q("SELECT set_config('enable_seqscan', 'off', true), set_config('enable_bitmapscan', 'off', true), set_config('enable_sort', 'off', true)");
        const rows = await t.q<{ "QUERY PLAN": string }>(`EXPLAIN ${sql}`, values);
        return new Rollback(rows.map((r) => r["QUERY PLAN"]));
      });
    },
  };
}

export type PgListings = ReturnType<typeof pgListings>;
