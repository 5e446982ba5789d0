import { canonicalIp } from "../vocabulary/ip-address.js";
import type { Page } from "./paging.js";
import type { HistoryRow, LicenseQuery } from "./ports/services.js";
import type { JobQuery } from "./ports/jobs.js";
import type { PlannedRead } from "./planned-reads.js";

/**
 * What the listings of both stores share (sqlite/listings.ts, postgres/listings.ts): which
 * filters a query uses (its SQL's shape) with their parameters, how a page is cut, where the
 * history cursor resumes, and the planned reads the query-plan tests check. Only the SQL is each
 * dialect's own.
 */

/** The reads of the queue (the jobs store's, not a listing's): planned too, by the jobs module. */
export type QueueRead = "job counts" | "oldest due job";

/** No cursor yet: above every id and time. */
export const TOP = Number.MAX_SAFE_INTEGER;

/** The filters a licence listing's SQL has. */
export interface LicenseShape {
  status: boolean;
  q: boolean;
  provider: boolean;
}
/** The filters a job listing's SQL has. */
export interface JobShape {
  state: boolean;
  kind: boolean;
  service: boolean;
}

/** A licence query's SQL shape and parameters: `q` trimmed, and as an IP in its canonical spelling. */
export function licenseParams(query: LicenseQuery) {
  const search = query.q?.trim();
  return {
    shape: { status: query.status !== undefined, q: search !== undefined && search !== "", provider: query.provider !== undefined },
    params: { status: query.status, q: search, ip: search === undefined ? undefined : (canonicalIp(search) ?? search), provider: query.provider },
  };
}

/** A job query's SQL shape and parameters. */
export function jobParams(query: JobQuery) {
  return {
    shape: { state: query.state !== undefined, kind: query.kind !== undefined, service: query.serviceId !== undefined },
    params: { state: query.state, kind: query.kind, service: query.serviceId },
  };
}

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
export function cut<R, T>(rows: R[], limit: number, cursorOf: (last: R) => string, view: (r: R) => T, total: number): Page<T> {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return { items: items.map(view), nextCursor: more ? cursorOf(items.at(-1)!) : null, total };
}

/** A history page's row: an event (src 0) or a history entry (src 1). */
export type HistoryPageRow = HistoryRow & { src: 0 | 1 };
export const historyRow = ({ src: _src, ...row }: HistoryPageRow): HistoryRow => row;

/** The columns of a ServiceBrief. */
export const BRIEF_COLUMNS = "service_id, kind, type, bundle, bundle_key, variant, upstream_variant, ip, status, expires_at, updated_at, provider, sku, upstream_id";

/** A dialect's SQL for each listing. */
export interface ListingSql {
  licenses(f: LicenseShape): string;
  licensesTotal(f: LicenseShape): string;
  jobs(f: JobShape): string;
  jobsTotal(f: JobShape): string;
  history: string;
  historyTotal: string;
  /** Service briefs after @after, by service id, @limit of them. */
  briefs: string;
  /** The services, every status but terminated, recording @upstreamId as @provider's id of their licence, by service id. */
  licenceHolders: string;
}

/** SQL and parameters of each planned read of a listing, with values of the right kind (plans, not answers). */
export function plannedReads(sql: ListingSql): Record<Exclude<PlannedRead, QueueRead>, () => [string, Record<string, unknown>]> {
  return {
    licenses: () => [sql.licenses({ status: false, q: false, provider: false }), { after: "", limit: 101 }],
    "licenses by status": () => [sql.licenses({ status: true, q: false, provider: false }), { after: "", status: "active", limit: 101 }],
    "licenses by provider": () => [sql.licenses({ status: false, q: false, provider: true }), { after: "", provider: "manage2", limit: 101 }],
    "licenses by provider and status": () => [sql.licenses({ status: true, q: false, provider: true }), { after: "", provider: "manage2", status: "active", limit: 101 }],
    "licenses search": () => [sql.licenses({ status: false, q: true, provider: false }), { after: "", q: "x", ip: "x", limit: 101 }],
    "licenses search by status": () => [sql.licenses({ status: true, q: true, provider: false }), { after: "", q: "x", ip: "x", status: "active", limit: 101 }],
    "licenses search by provider": () => [sql.licenses({ status: false, q: true, provider: true }), { after: "", q: "x", ip: "x", provider: "manage2", limit: 101 }],
    "licenses total": () => [sql.licensesTotal({ status: false, q: false, provider: false }), {}],
    "licenses total by status": () => [sql.licensesTotal({ status: true, q: false, provider: false }), { status: "active" }],
    "licenses total by provider": () => [sql.licensesTotal({ status: true, q: false, provider: true }), { provider: "manage2", status: "active" }],
    "licenses search total": () => [sql.licensesTotal({ status: true, q: true, provider: true }), { q: "x", ip: "x", status: "active", provider: "manage2" }],
    jobs: () => [sql.jobs({ state: false, kind: false, service: false }), { before: TOP, limit: 101 }],
    "jobs by state": () => [sql.jobs({ state: true, kind: false, service: false }), { before: TOP, state: "queued", limit: 101 }],
    "jobs by kind": () => [sql.jobs({ state: false, kind: true, service: false }), { before: TOP, kind: "renew", limit: 101 }],
    "jobs by kind and state": () => [sql.jobs({ state: true, kind: true, service: false }), { before: TOP, kind: "renew", state: "blocked", limit: 101 }],
    "jobs by service": () => [sql.jobs({ state: true, kind: true, service: true }), { before: TOP, service: "s", kind: "renew", state: "blocked", limit: 101 }],
    "jobs total": () => [sql.jobsTotal({ state: true, kind: true, service: false }), { state: "queued", kind: "renew" }],
    "jobs total by service": () => [sql.jobsTotal({ state: true, kind: false, service: true }), { service: "s", state: "queued" }],
    history: () => [sql.history, { id: "s", ...historyBounds(undefined), limit: 101 }],
    "history total": () => [sql.historyTotal, { id: "s" }],
    "service briefs": () => [sql.briefs, { after: "", limit: 1000 }],
    "services by licence id": () => [sql.licenceHolders, { provider: "manage2", upstreamId: "1" }],
  };
}
