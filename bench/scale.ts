// `npm run bench:scale` (issue 25 item 6): the service at 100,000 services, a million history
// rows and a million jobs, on SQLite and on PostgreSQL. It builds its own data set (bench/
// scale-data.ts: bulk inserts into a freshly migrated database), seeds the reseller sandbox with
// 100,000 licences, starts the compiled service (bench/pipeline-bridge.mjs, dist/ under plain
// node) and measures it over loopback: search, list page, /healthz idle and during an export,
// /metrics, reconcile (time and the process's peak RSS), an adoption plan of 100,000 rows; then
// a simulated year with pruning on (bench/scale-year.ts). BENCH_SCALE=0.1 shrinks every count.
// BENCH_STORES=sqlite (or postgres) measures one store only. BENCH_ONLY=reconcile,adopt (any of
// search, page, healthz, metrics, reconcile, adopt, year) runs only the measures named; the peak
// RSS is then that of start-up and those measures alone. The service runs with the node flags of
// `npm start` (its heap limit, child.ts); BENCH_SERVICE_NODE_FLAGS="" measures it without them.
// BENCH_COUNT_SQL=1: the statements each search, page and scrape costs, by text (sql-count.mjs;
// on PostgreSQL each is a round trip), printed after its figure.
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { DEFAULT_SANDBOX_TOKENS } from "../src/vocabulary/sandbox-identity.js";
import { startChild } from "./child.js";
import { startBenchCluster, type BenchCluster } from "./scale-postgres.js";
import { emailOf, ipOf, isTerminated, licenseKeyOf, migrateFresh, openBulk, sandboxState, seedBook, serviceIdOf, type StoreKind } from "./scale-data.js";
import { simulateYear } from "./scale-year.js";
import { markdownTable } from "./report.js";

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const SERVICES = Math.round(100_000 * SCALE);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 500);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const STORES = (process.env.BENCH_STORES ?? "sqlite,postgres").split(",") as StoreKind[];
const MEASURES = ["search", "page", "healthz", "metrics", "reconcile", "adopt", "year"] as const;
type Measure = (typeof MEASURES)[number];
const ONLY = process.env.BENCH_ONLY?.split(",").map((m) => m.trim());
const unknownMeasure = ONLY?.find((m) => !(MEASURES as readonly string[]).includes(m));
if (unknownMeasure !== undefined) throw new Error(`BENCH_ONLY: no measure "${unknownMeasure}" (one of ${MEASURES.join(", ")})`);
const wanted = (m: Measure) => !ONLY || ONLY.includes(m);
/** Any measure of the running service (all but the simulated year, which builds its own databases). */
const storeMeasured = MEASURES.some((m) => m !== "year" && wanted(m));
const ADMIN = "bench-admin-token-0000";
const SECRET = "whsec_" + Buffer.from("bench-scale-secret-00000").toString("base64");
const auth = { authorization: `Bearer ${ADMIN}` };
const COUNT_SQL = process.env.BENCH_COUNT_SQL === "1";

interface Row {
  measure: string;
  store: StoreKind;
  value: string;
  target: string;
  met: boolean | undefined;
}
const rows: Row[] = [];
const log = (s: string) => process.stderr.write(`${s}\n`);
/** A figure for the table, shown as soon as it is measured (a full run takes a while). */
function record(row: Row): void {
  rows.push(row);
  log(`[${row.store}] ${row.measure}: ${row.value}`);
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const sortNum = (v: number[]) => [...v].sort((a, b) => a - b);
const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
function spread(values: number[]): { p50: number; p99: number } {
  const s = sortNum(values);
  return { p50: pct(s, 50), p99: pct(s, 99) };
}
function minMedMax(values: number[]): string {
  const s = sortNum(values);
  return `${ms(s[0]!)} / ${ms(pct(s, 50))} / ${ms(s[s.length - 1]!)}`;
}

/** Sequential requests, each answered and its body read, timed one by one (ms). */
async function timed(n: number, url: (k: number) => string): Promise<number[]> {
  const out: number[] = [];
  for (let k = 0; k < n; k++) {
    const t = performance.now();
    const r = await fetch(url(k), { headers: auth });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`${url(k)}: HTTP ${r.status}`);
    out.push(performance.now() - t);
  }
  return out;
}

type Bridge = Awaited<ReturnType<typeof startChild<{ url: string }>>>;

/** `work`, and with BENCH_COUNT_SQL=1 the statements it made the service run, per request, most frequent first. */
async function counted<T>(bridge: Bridge, what: string, requests: number, work: () => Promise<T>): Promise<T> {
  if (!COUNT_SQL) return work();
  const statements = async () => (await bridge.ask<{ sql: Record<string, number> }>({ statements: true })).sql;
  const before = await statements();
  const out = await work();
  const after = await statements();
  const rows = Object.entries(after)
    .map(([sql, n]) => [sql, (n - (before[sql] ?? 0)) / requests] as const)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
  const of = (re: RegExp) => rows.filter(([sql]) => re.test(sql)).reduce((sum, [, n]) => sum + n, 0);
  log(`  statements per ${what}: ${of(/./).toFixed(2)}; BEGIN ${of(/^BEGIN/).toFixed(2)}`);
  for (const [sql, n] of rows) log(`  ${n.toFixed(2).padStart(6)}  ${sql.length > 150 ? `${sql.slice(0, 147)}...` : sql}`);
  return out;
}

/**
 * The panel's export for the adoption plan: a row for each terminated service's IP (its licence
 * is upstream and no live service holds it: adopt) and the rest at IPs with no licence (buy).
 */
function adoptionRows(): object[] {
  return Array.from({ length: SERVICES }, (_, i) => ({
    service_identifier: `panel-${i}`,
    package_identifier: "17",
    ip: isTerminated(i) ? ipOf(i) : `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
    customer_email: `panel${i}@example.com`,
    customer_name: `Panel Customer ${i}`,
    billing_cycle: "monthly",
    next_due_date: new Date(Date.now() + 20 * 86_400_000).toISOString().slice(0, 10),
    status: "active",
  }));
}

/**
 * Every licence through GET /admin/licenses/export, read as fast as a client can, by a process of
 * its own as a real client is: read in this process, the 40 MB of lines kept its event loop busy
 * and delayed the probes' own timers, so their figures were the probe's load as much as the
 * service's. Returns the lines read.
 */
async function exportRead(base: string): Promise<number> {
  const reader = `
    const http = require("node:http");
    http.get(process.env.URL, { headers: { authorization: process.env.AUTH } }, (res) => {
      if (res.statusCode !== 200) { console.error("export: HTTP " + res.statusCode); process.exit(1); }
      let lines = 0;
      res.on("data", (b) => { for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) lines++; });
      res.on("end", () => console.log(lines));
    }).on("error", (err) => { console.error(err); process.exit(1); });`;
  const { stdout } = await promisify(execFile)(process.execPath, ["-e", reader], { env: { ...process.env, URL: `${base}/admin/licenses/export`, AUTH: auth.authorization } });
  return Number(stdout.trim());
}

/** /healthz probed one request after another while `work` runs; each probe's time (ms). */
async function probedDuring(base: string, work: () => Promise<unknown>): Promise<number[]> {
  const during: number[] = [];
  let done = false;
  const working = work().finally(() => (done = true));
  while (!done) {
    const t0 = performance.now();
    const r = await fetch(`${base}/healthz`);
    await r.arrayBuffer();
    during.push(performance.now() - t0);
  }
  await working;
  return during;
}

function vmHwmMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function measureStore(kind: StoreKind, where: string, dir: string, stateFile: string): Promise<void> {
  log(`[${kind}] migrating and seeding ${SERVICES} services, ${SERVICES * 10} history rows, ${SERVICES * 10} jobs`);
  const t = performance.now();
  await migrateFresh(kind, where);
  const bulk = await openBulk(kind, where);
  await seedBook(bulk, { services: SERVICES, historyPerService: 10, jobsPerService: 10 }, Date.now(), (done) => {
    if (done % 20_000 === 0) log(`[${kind}]   ${done} services`);
  });
  log(`[${kind}] seeded in ${((performance.now() - t) / 1000).toFixed(0)} s, ${(await bulk.sizeBytes() / 1e6).toFixed(0)} MB`);
  await bulk.close();

  const sandbox = await startChild<{ apiUrl: string }>("sandbox-server.ts", [], { BENCH_LATENCY_MS: "0", BENCH_SANDBOX_STATE: stateFile });
  let bridge: Bridge | undefined;
  try {
    bridge = await startChild<{ url: string }>("pipeline-bridge.mjs", [], {
      ...(kind === "sqlite" ? { DATABASE_PATH: where, DATABASE_URL: "" } : { DATABASE_URL: where, DATABASE_PATH: join(dir, "unused.db") }),
      PORT: "0",
      RESELLER_API_URL: sandbox.info.apiUrl,
      RESELLER_API_TOKEN: DEFAULT_SANDBOX_TOKENS.reseller,
      // The shipped catalogue also has Manage2 and CLN products, which a bridge given only the reseller refuses.
      PRODUCTS_FILE: join(import.meta.dirname, "../config/products.json"),
      RESELLER_SETTLE_SECONDS: "0",
      WEBHOOK_SECRETS: SECRET,
      ADMIN_TOKEN: ADMIN,
      ALLOW_PRIVATE_IPS: "true",
    });
    const base = bridge.info.url;
    const pid = bridge.child.pid!;
    // Warm-up: the first requests open connections and compile the statements.
    await timed(20, (k) => `${base}/admin/licenses?q=${serviceIdOf(k)}`);
    record({ measure: "service's peak RSS (VmHWM) after start and 20 searches", store: kind, value: `${vmHwmMb(pid).toFixed(0)} MB`, target: "", met: undefined });

    if (wanted("search")) {
      const keys = [(i: number) => ipOf(i), (i: number) => emailOf(i), (i: number) => serviceIdOf(i), (i: number) => licenseKeyOf(i)];
      const pick = (k: number) => (k * 7919) % SERVICES;
      const search = spread(await counted(bridge, "search", REQUESTS, () => timed(REQUESTS, (k) => `${base}/admin/licenses?q=${encodeURIComponent(keys[k % 4]!(pick(k)))}`)));
      record({ measure: `licence search (q = IP, e-mail, service id, key; ${REQUESTS} requests)`, store: kind, value: `p50 ${ms(search.p50)} ms, p99 ${ms(search.p99)} ms`, target: "p99 <= 20 ms", met: search.p99 <= 20 });
    }

    if (wanted("page")) {
      // List pages: a walk from the first page, following next_cursor (back to the start at the end).
      let cursor: string | null = null;
      const pageTimes: number[] = [];
      await counted(bridge, "list page", REQUESTS, async () => {
        for (let k = 0; k < REQUESTS; k++) {
          const t0 = performance.now();
          const r = await fetch(`${base}/admin/licenses?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { headers: auth });
          const page = (await r.json()) as { next_cursor: string | null };
          pageTimes.push(performance.now() - t0);
          if (r.status !== 200) throw new Error(`list page: HTTP ${r.status}`);
          cursor = page.next_cursor;
        }
      });
      const pages = spread(pageTimes);
      // Not timed: the jobs listing's statements, for the count.
      if (COUNT_SQL) await counted(bridge, "jobs page", 20, () => timed(20, () => `${base}/admin/jobs?limit=100`));
      record({ measure: `list page (limit=100, cursor walk; ${REQUESTS} pages)`, store: kind, value: `p50 ${ms(pages.p50)} ms, p99 ${ms(pages.p99)} ms`, target: "p99 <= 20 ms", met: pages.p99 <= 20 });
    }

    // Idle /healthz, the yardstick of the probes made during an export and during a reconcile.
    const idle = wanted("healthz") || wanted("reconcile") ? spread(await timed(REQUESTS, () => `${base}/healthz`)) : undefined;
    if (idle) record({ measure: `/healthz idle (${REQUESTS} requests)`, store: kind, value: `p50 ${ms(idle.p50)} ms, p99 ${ms(idle.p99)} ms`, target: "", met: undefined });

    if (wanted("healthz")) {
      // The same probe while another client reads an export of every licence as fast as it can.
      let exported = 0;
      const exportStarted = performance.now();
      const during = await probedDuring(base, async () => {
        exported = await exportRead(base);
      });
      const exportMs = performance.now() - exportStarted;
      const busy = spread(during);
      const ratio = busy.p99 / idle!.p99;
      record({
        measure: `/healthz during an export of ${exported} licences (${(exportMs / 1000).toFixed(1)} s, ${during.length} requests)`,
        store: kind,
        value: `p50 ${ms(busy.p50)} ms, p99 ${ms(busy.p99)} ms: ${ratio.toFixed(2)}x idle p99`,
        target: "p99 <= 2x idle p99",
        met: ratio <= 2,
      });
    }

    if (wanted("metrics")) {
      const scrapes = Math.max(20, REQUESTS / 5);
      const scrape = spread(await counted(bridge, "scrape", scrapes, () => timed(scrapes, () => `${base}/metrics`)));
      record({ measure: `/metrics scrape (${scrapes} scrapes)`, store: kind, value: `p50 ${ms(scrape.p50)} ms, p99 ${ms(scrape.p99)} ms`, target: "p99 <= 20 ms", met: scrape.p99 <= 20 });
    }

    if (wanted("reconcile")) {
      // Reconcile: the service reads the sandbox's whole list (100,000 licences) and every service.
      const reconcileOnce = async (): Promise<number> => {
        const res = await fetch(`${base}/admin/reconcile`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: "{}" });
        const body = (await res.json()) as { drift: unknown[] };
        if (res.status !== 200) throw new Error(`reconcile: HTTP ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
        return body.drift.length;
      };
      const reconcileMs: number[] = [];
      let drift = 0;
      for (let r = 0; r < RUNS; r++) {
        const t0 = performance.now();
        drift = await reconcileOnce();
        reconcileMs.push(performance.now() - t0);
      }
      const hwm = vmHwmMb(pid);
      const rec = sortNum(reconcileMs);
      record({ measure: `reconcile over ${SERVICES} upstream licences (${drift} drift items; ${RUNS} runs, min/median/max)`, store: kind, value: `${minMedMax(reconcileMs.map((v) => v / 1000))} s`, target: "<= 10 s", met: rec[rec.length - 1]! <= 10_000 });
      record({ measure: `service's peak RSS (VmHWM) after start, ${ONLY ? "" : "reads, export and "}reconcile`, store: kind, value: `${hwm.toFixed(0)} MB`, target: "<= 300 MB", met: hwm <= 300 });
      // One more run, untimed, with /healthz probed throughout: how long reconcile holds the event loop.
      const probes = await probedDuring(base, reconcileOnce);
      const during = spread(probes);
      record({
        measure: `/healthz during a reconcile (one more run, ${probes.length} requests)`,
        store: kind,
        value: `p50 ${ms(during.p50)} ms, p99 ${ms(during.p99)} ms, max ${ms(Math.max(...probes))} ms: ${(during.p99 / idle!.p99).toFixed(2)}x idle p99`,
        target: "",
        met: undefined,
      });
    }

    if (wanted("adopt")) {
      const body = JSON.stringify({ services: adoptionRows() });
      const planMs: number[] = [];
      let counts = "";
      for (let r = 0; r < RUNS; r++) {
        const t0 = performance.now();
        const res = await fetch(`${base}/admin/adopt`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body });
        const plan = (await res.json()) as { plan: { action: string }[]; orphans: unknown[] };
        planMs.push(performance.now() - t0);
        if (res.status !== 200) throw new Error(`adopt: HTTP ${res.status} ${JSON.stringify(plan).slice(0, 300)}`);
        const by: Record<string, number> = {};
        for (const p of plan.plan) by[p.action] = (by[p.action] ?? 0) + 1;
        counts = `${Object.entries(by).map(([a, n]) => `${n} ${a}`).join(", ")}, ${plan.orphans.length} orphans`;
      }
      const plans = sortNum(planMs);
      record({ measure: `adoption plan of ${SERVICES} rows (${counts}; ${RUNS} runs)`, store: kind, value: `${minMedMax(planMs.map((v) => v / 1000))} s`, target: "<= 30 s", met: plans[plans.length - 1]! <= 30_000 });
    }
    record({ measure: `service's peak RSS (VmHWM) at the end${wanted("adopt") ? ", adoption plans included" : ""}`, store: kind, value: `${vmHwmMb(pid).toFixed(0)} MB`, target: "", met: undefined });
  } finally {
    await bridge?.stop();
    await sandbox.stop();
  }
}

async function measureYear(kind: StoreKind, where: string): Promise<void> {
  const book = Math.round(10_000 * SCALE);
  const orders = Math.max(1, Math.round(30 * SCALE));
  log(`[${kind}] a simulated year: a book of ${book} services, ${orders} orders and cancellations a day, monthly renewals, pruning daily (after a warm-up until the book has turned over)`);
  const y = await simulateYear(kind, where, book, orders, (day) => {
    if (day % 60 === 0) log(`[${kind}]   day ${day}`);
  });
  const growth = y.month12 / y.month4 - 1;
  record({
    measure: `database size over a year (book ${book}, ${orders} orders/day, RETENTION_DAYS 90, TERMINATED_RETENTION_DAYS 90, after ${y.warmupDays} days of warm-up), month 4 -> month 12 (monthly min/median/max MB)`,
    store: kind,
    value: `${(y.month4 / 1e6).toFixed(1)} -> ${(y.month12 / 1e6).toFixed(1)} MB (${growth >= 0 ? "+" : ""}${(growth * 100).toFixed(1)} %; ${minMedMax(y.monthly.map((b) => b / 1e6))})`,
    target: "within 10 %",
    met: Math.abs(growth) <= 0.1,
  });
  // Where it grew: the tables a prune never shortens (history, events' rows) against the rest.
  const mb = (b: number) => (b / 1e6).toFixed(1);
  const parts = Object.keys(y.tables12).map((t) => `${t} ${mb(y.tables4[t] ?? 0)} -> ${mb(y.tables12[t]!)} (${y.rows4[t] ?? 0} -> ${y.rows12[t]} rows)`);
  record({ measure: "  of which, per table with its indexes (MB and rows, month 4 -> month 12)", store: kind, value: parts.join(", "), target: "", met: undefined });
}

function printTable(load: string): string {
  const head = ["measure", "store", "value", "target", "met"];
  const cells = rows.map((r) => [r.measure, r.store, r.value, r.target, r.met === undefined ? "" : r.met ? "yes" : "no"]);
  return [
    `## scale (issue 25): ${SERVICES} services, ${SERVICES * 10} history rows, ${SERVICES * 10} jobs${ONLY ? ` (BENCH_ONLY=${ONLY.join(",")})` : ""}; machine load before: ${load}`,
    "",
    ...markdownTable(head, cells),
  ].join("\n");
}

const uptime = () => execFileSync("uptime", { encoding: "utf8" }).trim().replace(/^.*load average/, "load average");
const loadBefore = uptime();
log(`bench:scale, ${loadBefore}`);
const dir = mkdtempSync(join(tmpdir(), "lb-bench-scale-"));
let cluster: BenchCluster | undefined;
try {
  const stateFile = sandboxState(dir, SERVICES);
  for (const kind of STORES) {
    if (kind === "sqlite") {
      if (storeMeasured) await measureStore("sqlite", join(dir, "scale.db"), dir, stateFile);
      if (wanted("year")) await measureYear("sqlite", join(dir, "year.db"));
      continue;
    }
    const started = await startBenchCluster();
    if ("skip" in started) {
      console.log(`PostgreSQL: ${started.skip}`);
      continue;
    }
    cluster = started;
    if (storeMeasured) await measureStore("postgres", cluster.url, dir, stateFile);
    const yearUrl = cluster.url.replace(/\/bench$/, "/postgres");
    if (wanted("year")) await measureYear("postgres", yearUrl);
  }
} finally {
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
}
console.log(printTable(loadBefore));
console.log(`\nmachine load after: ${uptime()}`);
