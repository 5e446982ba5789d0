import { JOB_STATES } from "../../vocabulary/jobs.js";
import { SERVICE_STATUSES } from "../../vocabulary/service-statuses.js";
import { toJob, type JobRow } from "../job-row.js";
import { cursorKey, encodeCursor, type Page, type PageRequest } from "../paging.js";
import { BRIEF_COLUMNS, cut, historyBounds, historyRow, jobParams, licenseParams, plannedReads, TOP, type HistoryPageRow, type JobShape, type LicenseShape } from "../listing-reads.js";
import type { HistoryRow, LicenseQuery, ServiceBrief } from "../ports/services.js";
import type { JobQuery } from "../ports/jobs.js";
import type { ServiceRow } from "../service-row.js";
import type { ProviderName } from "../../vocabulary/provider-names.js";
import type { Db } from "./database.js";

/**
 * The listings on SQLite: each page one statement that reads an index range from the cursor on
 * and stops after the page (one row more, to know whether another page follows), so a page
 * costs the same anywhere in a table of any size; totals from the counters (migration 008) or a
 * range the filter bounds. A read runs on the event loop here: it must stay that small.
 */



/** The service ids a search matches, one index look-up per key (a UNION of them, not an OR the planner may turn into a scan). */
const SEARCH = `SELECT service_id FROM services WHERE service_id = @q
  UNION SELECT service_id FROM services WHERE ip = @ip
  UNION SELECT service_id FROM services WHERE lower(customer_email) = lower(@q)
  UNION SELECT service_id FROM services WHERE license_key = @q`;


function licensesSql(f: LicenseShape): string {
  const order = "ORDER BY service_id LIMIT @limit";
  // By provider alone: (provider, status, service_id) holds each status's licences of the
  // provider in service id order, so the page is the first of one short range per status, merged.
  if (f.provider && !f.status && !f.q) {
    const branch = (status: string) => `SELECT * FROM (SELECT * FROM services WHERE provider = @provider AND status = '${status}' AND service_id > @after ${order})`;
    return `${SERVICE_STATUSES.map(branch).join(" UNION ALL ")} ${order}`;
  }
  return `SELECT * FROM services WHERE ${["service_id > @after", ...licenseFilters(f)].join(" AND ")} ${order}`;
}

/**
 * The filters of a licence listing. A search is its few matches: the provider is then checked
 * row by row, written (unary +) so that the planner cannot take the provider's range instead,
 * which may hold every licence.
 */
function licenseFilters(f: LicenseShape): string[] {
  return [
    ...(f.status ? ["status = @status"] : []),
    ...(f.provider ? [`${f.q ? "+" : ""}provider = @provider`] : []),
    ...(f.q ? [`service_id IN (${SEARCH})`] : []),
  ];
}

function licensesTotalSql(f: LicenseShape): string {
  if (f.q) return `SELECT COUNT(*) AS n FROM services WHERE ${licenseFilters(f).join(" AND ")}`;
  const where = [...(f.status ? ["status = @status"] : []), ...(f.provider ? ["provider = @provider"] : [])];
  return `SELECT COALESCE(SUM(n), 0) AS n FROM service_counts${where.length ? ` WHERE ${where.join(" AND ")}` : ""}`;
}


function jobsSql(f: JobShape): string {
  const order = "ORDER BY id DESC LIMIT @limit";
  // By kind alone: (kind, state, id) holds each state's jobs of the kind in id order, so the page
  // is the newest of one short range per state, merged.
  if (f.kind && !f.state && !f.service) {
    const branch = (state: string) => `SELECT * FROM (SELECT * FROM jobs WHERE kind = @kind AND state = '${state}' AND id < @before ${order})`;
    return `${JOB_STATES.map(branch).join(" UNION ALL ")} ${order}`;
  }
  return `SELECT * FROM jobs WHERE ${["id < @before", ...jobFilters(f)].join(" AND ")} ${order}`;
}

/**
 * The filters of a job listing. By service, the service's own range of jobs_service: its state
 * and kind are then checked row by row, written (unary +) so that the planner cannot take a
 * state's or a kind's range instead, which may hold every job of the queue.
 */
function jobFilters(f: JobShape): string[] {
  const column = (name: string) => (f.service ? `+${name}` : name);
  return [
    ...(f.service ? ["service_id = @service"] : []),
    ...(f.state ? [`${column("state")} = @state`] : []),
    ...(f.kind ? [`${column("kind")} = @kind`] : []),
  ];
}

function jobsTotalSql(f: JobShape): string {
  if (f.service) return `SELECT COUNT(*) AS n FROM jobs WHERE ${jobFilters(f).join(" AND ")}`;
  const where = [...(f.state ? ["state = @state"] : []), ...(f.kind ? ["kind = @kind"] : [])];
  return `SELECT COALESCE(SUM(n), 0) AS n FROM job_counts${where.length ? ` WHERE ${where.join(" AND ")}` : ""}`;
}

/**
 * Newest first, by (at, src, id): src 0 a received event (its own history entry), 1 a history
 * entry, so an event comes before what it caused at the same millisecond. Each table gives its
 * newest rows below the cursor from its (service_id, time, rowid) index; the merge keeps a page.
 */
const HISTORY_SQL = `SELECT src, id, service_id, at, event_id, job_id, action, detail FROM (
    SELECT * FROM (SELECT 0 AS src, rowid AS id, service_id, received_at AS at, id AS event_id, NULL AS job_id,
                          'received ' || type AS action, detail
                   FROM events WHERE service_id = @id AND (received_at, rowid) < (@eventAt, @eventId)
                   ORDER BY received_at DESC, rowid DESC LIMIT @limit)
    UNION ALL
    SELECT * FROM (SELECT 1 AS src, id, service_id, at, event_id, job_id, action, detail
                   FROM history WHERE service_id = @id AND (at, id) < (@historyAt, @historyId)
                   ORDER BY at DESC, id DESC LIMIT @limit))
  ORDER BY at DESC, src DESC, id DESC LIMIT @limit`;

const HISTORY_TOTAL_SQL = "SELECT (SELECT COUNT(*) FROM events WHERE service_id = @id) + (SELECT COUNT(*) FROM history WHERE service_id = @id) AS n";

const BRIEFS_SQL = `SELECT ${BRIEF_COLUMNS} FROM services WHERE service_id > @after ORDER BY service_id LIMIT @limit`;

/** Through services_upstream_id (migration 017): `upstream_id = ...` implies its IS NOT NULL. */
const LICENCE_HOLDERS_SQL = "SELECT * FROM services WHERE provider = @provider AND upstream_id = @upstreamId AND status <> 'terminated' ORDER BY service_id";




export function sqliteListings(db: Db) {
  const statements = new Map<string, ReturnType<Db["prepare"]>>();
  const prepared = (sql: string) => {
    let s = statements.get(sql);
    if (!s) statements.set(sql, (s = db.prepare(sql)));
    return s;
  };
  const count = (sql: string, params: Record<string, unknown>) => (prepared(sql).get(params) as { n: number }).n;


  const planned = plannedReads({ licenses: licensesSql, licensesTotal: licensesTotalSql, jobs: jobsSql, jobsTotal: jobsTotalSql, history: HISTORY_SQL, historyTotal: HISTORY_TOTAL_SQL, briefs: BRIEFS_SQL, licenceHolders: LICENCE_HOLDERS_SQL });

  return {
    licenses(q: LicenseQuery): Page<ServiceRow> {
      const { shape, params } = licenseParams(q);
      const after = cursorKey("licenses", q.cursor)?.[0] ?? "";
      const rows = prepared(licensesSql(shape)).all({ ...params, after, limit: q.limit + 1 }) as ServiceRow[];
      return cut(rows, q.limit, (r) => encodeCursor("licenses", [r.service_id]), (r) => r, count(licensesTotalSql(shape), params));
    },
    jobs(q: JobQuery): Page<ReturnType<typeof toJob>> {
      const { shape, params } = jobParams(q);
      const before = cursorKey("jobs", q.cursor)?.[0] ?? TOP;
      const rows = prepared(jobsSql(shape)).all({ ...params, before, limit: q.limit + 1 }) as JobRow[];
      return cut(rows, q.limit, (r) => encodeCursor("jobs", [r.id]), toJob, count(jobsTotalSql(shape), params));
    },
    history(serviceId: string, page: PageRequest): Page<HistoryRow> {
      const bounds = historyBounds(cursorKey("history", page.cursor));
      const rows = prepared(HISTORY_SQL).all({ id: serviceId, ...bounds, limit: page.limit + 1 }) as HistoryPageRow[];
      return cut(rows, page.limit, (r) => encodeCursor("history", [r.at, r.src, r.id]), historyRow, count(HISTORY_TOTAL_SQL, { id: serviceId }));
    },
    briefs(after: string | undefined, limit: number): ServiceBrief[] {
      return prepared(BRIEFS_SQL).all({ after: after ?? "", limit }) as ServiceBrief[];
    },
    licenceHolders(provider: ProviderName, upstreamId: string): ServiceRow[] {
      return prepared(LICENCE_HOLDERS_SQL).all({ provider, upstreamId }) as ServiceRow[];
    },
    planned,
  };
}

export type SqliteListings = ReturnType<typeof sqliteListings>;
