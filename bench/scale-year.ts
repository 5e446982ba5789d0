// A simulated year of a steady book with pruning on: every day new orders (and, once the book is
// full, as many cancellations, the oldest services first), a thirtieth of the book's monthly
// renewals, each written as the service writes them (event with its payload, jobs finished, mail
// record, history), then the day's prune (src/retention/retention.ts, RETENTION_DAYS 90,
// TERMINATED_RETENTION_DAYS 90) at the day's end on a manual clock.
// Steady means the book's ages are spread as they stay: a book filled on one day would age as
// one (every licence's history growing all year, none ended long enough to be pruned), which is a
// book starting up, not a book running for years. So the book starts empty and fills at the
// daily rate, runs until the services of the fill have all been cancelled and pruned (the
// warm-up: two lifetimes and TERMINATED_RETENTION_DAYS), and the year is measured from there: the database's
// size after the prune of the year's day 120 (month 4) and day 365 (month 12).
import { manualClock } from "../src/clock.js";
import { silentLogger } from "../src/log/logger.js";
import { prune } from "../src/retention/retention.js";
import { openPostgresStore } from "../src/store/postgres/store.js";
import { openSqliteStore } from "../src/store/sqlite/store.js";
import type { Store } from "../src/store/store.js";
import { serviceQueueKey } from "../src/vocabulary/job-kinds.js";
import { HISTORY_COLUMNS, JOB_COLUMNS, SERVICE_COLUMNS, ipOf, migrateFresh, openBulk, type StoreKind } from "./scale-data.js";

const DAY = 86_400_000;
const RETENTION_DAYS = 90;
const TERMINATED_RETENTION_DAYS = 90;
const EVENT_COLUMNS = ["id", "source", "webhook_id", "type", "service_id", "payload", "received_at", "outcome"] as const;
const MAIL_COLUMNS = ["mail_key", "kind", "event_id", "job_id", "service_id", "to_address", "subject", "message_id", "state", "attempts", "created_at", "sent_at"] as const;

/** A panel's webhook body, about the size the adapters store (a kilobyte). */
function payload(type: string, id: string, i: number): string {
  return JSON.stringify({
    type,
    service: { id, product_id: "17", billing_cycle: "monthly", ip: ipOf(i % 131_072), customer: { email: `c${i}@example.com`, name: `Customer ${i}` } },
    panel: { invoice: `INV-${i}`, note: "x".repeat(700) },
  });
}

export interface YearResult {
  month4: number;
  month12: number;
  /** Size after every 30 days' prune, for the table's spread. */
  monthly: number[];
  /** Days run before the measured year. */
  warmupDays: number;
  /** What each table took at month 4 and at month 12: where the growth is. */
  tables4: Record<string, number>;
  tables12: Record<string, number>;
  /** Rows per table at month 4 and at month 12. */
  rows4: Record<string, number>;
  rows12: Record<string, number>;
}

const TABLES = ["services", "history", "events", "jobs", "mails"] as const;

export async function simulateYear(kind: StoreKind, where: string, book: number, ordersPerDay: number, progress: (day: number) => void): Promise<YearResult> {
  await migrateFresh(kind, where);
  const start = Date.UTC(2026, 0, 1);
  const clock = manualClock(start);
  const store: Store =
    kind === "sqlite"
      ? openSqliteStore(where, { clock, maxAttempts: 5 })
      : await openPostgresStore(where, { clock, maxAttempts: 5, logger: silentLogger(), poolSize: 2 });
  const db = await openBulk(kind, where);
  let next = 0; // the next service's number
  let firstLive = 0; // the book is services [firstLive, next): the oldest ones cancel first
  let jobIds = 0;
  const monthly: number[] = [];
  let month4 = 0;
  let tables4: Record<string, number> = {};
  let rows4: Record<string, number> = {};
  try {
    const order = (at: number, services: unknown[][], events: unknown[][], jobs: unknown[][], mails: unknown[][], history: unknown[][]) => {
      const i = next++;
      const id = `y-${i}`;
      const ev = `evt-o-${i}`;
      services.push([id, "17", "licence", "cloudlinux", ipOf(i % 131_072), "monthly", 1, "active", `c${i}@example.com`, `Customer ${i}`, at + 30 * DAY, at + 30 * DAY, "[]", at, at, ev, `lb_y${i.toString(16).padStart(22, "0")}`]);
      events.push([ev, "whmcs", `wh-o-${i}`, "service.created", id, payload("service.created", id, i), at, "done"]);
      for (const k of ["register", "mail_install"]) jobs.push([k, serviceQueueKey(id), id, `${k}:${ev}`, `{"event_id":"${ev}"}`, "succeeded", 1, 5, at + 1000, at, at + 1000, k === "mail_install" ? 0 : 1]);
      mails.push([`install:${ev}`, "install", ev, ++jobIds, id, `c${i}@example.com`, "Your licence is ready", `<${ev}@bench>`, "sent", 1, at, at + 2000]);
      for (const a of ["order received", "registered", "mailed install instructions"]) history.push([id, at, a, `${a} (${ev})`]);
    };
    // A service lives book / ordersPerDay days: the book fills in that time, then turns over.
    // The rows written while it filled share pages until the last of their services has been
    // cancelled and pruned, a lifetime and TERMINATED_RETENTION_DAYS after the fill: the pages
    // are as they stay only from then on.
    const lifetime = Math.ceil(book / ordersPerDay);
    const warmupDays = 2 * lifetime + TERMINATED_RETENTION_DAYS + 30;
    for (let day = 1; day <= warmupDays + 365; day++) {
      const yearDay = day - warmupDays;
      const dayStart = start + (day - 1) * DAY;
      const services: unknown[][] = [];
      const events: unknown[][] = [];
      const jobs: unknown[][] = [];
      const mails: unknown[][] = [];
      const history: unknown[][] = [];
      const renewed: string[] = [];
      const cancelled: string[] = [];
      const orders = ordersPerDay;
      for (let o = 0; o < orders; o++) order(dayStart + o, services, events, jobs, mails, history);
      // Once the book is full, as many of the oldest services cancel as come in.
      if (next - firstLive > book) {
        for (let c = 0; c < ordersPerDay; c++) {
          const i = firstLive++;
          const id = `y-${i}`;
          const at = dayStart + 3_600_000 + c;
          cancelled.push(id);
          events.push([`evt-t-${i}`, "whmcs", `wh-t-${i}`, "service.terminated", id, payload("service.terminated", id, i), at, "done"]);
          jobs.push(["terminate", serviceQueueKey(id), id, `terminate:evt-t-${i}`, `{"event_id":"evt-t-${i}"}`, "succeeded", 1, 5, at + 1000, at, at + 1000, 1]);
          history.push([id, at, "terminated", `terminated (evt-t-${i})`]);
        }
        // Monthly renewals: the services whose number falls on today's day of a 30-day cycle.
        for (let i = firstLive; i < next - orders; i++) {
          if (i % 30 !== day % 30) continue;
          const id = `y-${i}`;
          const at = dayStart + 7_200_000 + (i % 1000);
          const ev = `evt-p-${i}-${day}`;
          renewed.push(id);
          events.push([ev, "whmcs", `wh-p-${i}-${day}`, "payment.received", id, payload("payment.received", id, i), at, "done"]);
          for (const k of ["record_payment", "renew"]) jobs.push([k, serviceQueueKey(id), id, `${k}:${ev}`, `{"event_id":"${ev}"}`, "succeeded", 1, 5, at + 1000, at, at + 1000, 1]);
          history.push([id, at, "payment recorded", `payment recorded (${ev})`], [id, at, "renewed", `renewed until day ${day + 30}`]);
        }
      }
      type Row = (string | number | null)[];
      if (services.length) await db.insert("services", SERVICE_COLUMNS, services as Row[]);
      for (const [table, columns, rows] of [["events", EVENT_COLUMNS, events], ["jobs", JOB_COLUMNS, jobs], ["mails", MAIL_COLUMNS, mails], ["history", HISTORY_COLUMNS, history]] as const) {
        for (let k = 0; k < rows.length; k += 5000) await db.insert(table, columns, rows.slice(k, k + 5000) as Row[]);
      }
      const quoted = (ids: string[]) => ids.map((id) => `'${id}'`).join(", ");
      const noon = dayStart + DAY / 2;
      if (renewed.length) await db.exec(`UPDATE services SET expires_at = ${noon + 30 * DAY}, paid_until = ${noon + 30 * DAY}, updated_at = ${noon} WHERE service_id IN (${quoted(renewed)})`);
      if (cancelled.length) await db.exec(`UPDATE services SET status = 'terminated', updated_at = ${noon} WHERE service_id IN (${quoted(cancelled)})`);
      clock.set(dayStart + DAY - 1);
      await prune({ store, clock, days: RETENTION_DAYS, terminatedDays: TERMINATED_RETENTION_DAYS });
      // What a /metrics scrape does on the running service (every few seconds there, once a day
      // here): read the job counts, which on PostgreSQL folds the counters' change logs
      // (src/store/postgres/tallies.ts): every job or status change adds a row to them, and
      // without a read that folds them they would grow all year, as on no running service.
      await store.jobs.counts();
      if (yearDay > 0 && (yearDay % 30 === 0 || yearDay === 120 || yearDay === 365)) {
        const size = await db.sizeBytes();
        if (yearDay % 30 === 0) monthly.push(size);
        if (yearDay === 120) {
          month4 = size;
          tables4 = await db.tableBytes(TABLES);
          rows4 = await db.rowCounts(TABLES);
        }
        if (yearDay === 365) return { month4, month12: size, monthly, warmupDays, tables4, tables12: await db.tableBytes(TABLES), rows4, rows12: await db.rowCounts(TABLES) };
      }
      progress(day);
    }
    throw new Error("unreachable");
  } finally {
    await db.close();
    await store.close();
  }
}
