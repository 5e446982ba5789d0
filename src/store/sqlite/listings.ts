import { canonicalIp } from "../../vocabulary/ip-address.js";
import { JOB_STATES } from "../../vocabulary/jobs.js";
import { toJob, type JobRow } from "../job-row.js";
import { cursorKey, encodeCursor, type Page } from "../paging.js";
import type { HistoryRow, JobQuery, LicenseQuery, PageRequest, PlannedRead, ServiceRow } from "../store.js";
import type { Db } from "./database.js";

/**
 * The listings on SQLite: each page one statement that reads an index range from the cursor on
 * and stops after the page (one row more, to know whether another page follows), so a page
 * costs the same anywhere in a table of any size; totals from the counters (migration 008) or a
 * range the filter bounds. A read runs on the event loop here: it must stay that small.
 */

/** Above every id and time: the start of a newest-first listing. */
const TOP = Number.MAX_SAFE_INTEGER;

/** The planned reads of a scrape: the queue's own (./jobs.ts). */
export type QueueRead = "job counts" | "oldest due job";

/** The service ids a search matches, one index look-up per key (a UNION of them, not an OR the planner may turn into a scan). */
const SEARCH = `SELECT service_id FROM services WHERE service_id = @q
  UNION SELECT service_id FROM services WHERE ip = @ip
  UNION SELECT service_id FROM services WHERE lower(customer_email) = lower(@q)
  UNION SELECT service_id FROM services WHERE license_key = @q`;

interface LicenseShape {
  status: boolean;
  q: boolean;
}

function licensesSql(f: LicenseShape): string {
  const where = ["service_id > @after", ...(f.status ? ["status = @status"] : []), ...(f.q ? [`service_id IN (${SEARCH})`] : [])];
  return `SELECT * FROM services WHERE ${where.join(" AND ")} ORDER BY service_id LIMIT @limit`;
}

function licensesTotalSql(f: LicenseShape): string {
  if (f.q) return `SELECT COUNT(*) AS n FROM services WHERE service_id IN (${SEARCH})${f.status ? " AND status = @status" : ""}`;
  return `SELECT COALESCE(SUM(n), 0) AS n FROM service_counts${f.status ? " WHERE status = @status" : ""}`;
}

interface JobShape {
  state: boolean;
  kind: boolean;
  service: boolean;
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

/**
 * Where each table's rows resume after the history cursor (at, src, id): the rows below it in
 * (at, src, id) order, as an (at, id) bound per table. Events (src 0) after a history entry at
 * the same time are all still to come; history entries (src 1) after an event are those before its time.
 */
export function historyBounds(key: [number, 0 | 1, number] | undefined) {
  if (!key) return { eventAt: TOP, eventId: TOP, historyAt: TOP, historyId: TOP };
  const [at, src, id] = key;
  return src === 1 ? { eventAt: at, eventId: TOP, historyAt: at, historyId: id } : { eventAt: at, eventId: id, historyAt: at, historyId: 0 };
}

/** One more row than the page: whether it came says whether a next page exists. */
function cut<R, T>(rows: R[], limit: number, cursorOf: (last: R) => string, view: (r: R) => T, total: number): Page<T> {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return { items: items.map(view), nextCursor: more ? cursorOf(items.at(-1)!) : null, total };
}

type HistoryPageRow = HistoryRow & { src: 0 | 1 };
const historyRow = ({ src: _src, ...row }: HistoryPageRow): HistoryRow => row;

export function sqliteListings(db: Db) {
  const statements = new Map<string, ReturnType<Db["prepare"]>>();
  const prepared = (sql: string) => {
    let s = statements.get(sql);
    if (!s) statements.set(sql, (s = db.prepare(sql)));
    return s;
  };
  const count = (sql: string, params: Record<string, unknown>) => (prepared(sql).get(params) as { n: number }).n;

  const licenseParams = (q: LicenseQuery) => {
    const search = q.q?.trim();
    return {
      shape: { status: q.status !== undefined, q: search !== undefined && search !== "" },
      params: { status: q.status, q: search, ip: search === undefined ? undefined : (canonicalIp(search) ?? search) },
    };
  };
  const jobParams = (q: JobQuery) => ({
    shape: { state: q.state !== undefined, kind: q.kind !== undefined, service: q.serviceId !== undefined },
    params: { state: q.state, kind: q.kind, service: q.serviceId },
  });

  /** SQL and parameters of each planned read of a listing, with values of the right kind (plans, not answers). */
  const planned: Record<Exclude<PlannedRead, QueueRead>, () => [string, Record<string, unknown>]> = {
    licenses: () => [licensesSql({ status: false, q: false }), { after: "", limit: 101 }],
    "licenses by status": () => [licensesSql({ status: true, q: false }), { after: "", status: "active", limit: 101 }],
    "licenses search": () => [licensesSql({ status: false, q: true }), { after: "", q: "x", ip: "x", limit: 101 }],
    "licenses search by status": () => [licensesSql({ status: true, q: true }), { after: "", q: "x", ip: "x", status: "active", limit: 101 }],
    "licenses total": () => [licensesTotalSql({ status: false, q: false }), {}],
    "licenses total by status": () => [licensesTotalSql({ status: true, q: false }), { status: "active" }],
    "licenses search total": () => [licensesTotalSql({ status: true, q: true }), { q: "x", ip: "x", status: "active" }],
    jobs: () => [jobsSql({ state: false, kind: false, service: false }), { before: TOP, limit: 101 }],
    "jobs by state": () => [jobsSql({ state: true, kind: false, service: false }), { before: TOP, state: "queued", limit: 101 }],
    "jobs by kind": () => [jobsSql({ state: false, kind: true, service: false }), { before: TOP, kind: "renew", limit: 101 }],
    "jobs by kind and state": () => [jobsSql({ state: true, kind: true, service: false }), { before: TOP, kind: "renew", state: "blocked", limit: 101 }],
    "jobs by service": () => [jobsSql({ state: true, kind: true, service: true }), { before: TOP, service: "s", kind: "renew", state: "blocked", limit: 101 }],
    "jobs total": () => [jobsTotalSql({ state: true, kind: true, service: false }), { state: "queued", kind: "renew" }],
    "jobs total by service": () => [jobsTotalSql({ state: true, kind: false, service: true }), { service: "s", state: "queued" }],
    history: () => [HISTORY_SQL, { id: "s", ...historyBounds(undefined), limit: 101 }],
    "history total": () => [HISTORY_TOTAL_SQL, { id: "s" }],
  };

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
    planned,
  };
}

export type SqliteListings = ReturnType<typeof sqliteListings>;
