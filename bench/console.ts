// `npm run bench:console` (issue 26): the operator console's server time per page at 100,000
// licences, on SQLite and on PostgreSQL. The data set is bench:scale's (scale-data.ts: 100,000
// services, a million history rows, a million jobs) plus what only the console shows
// (console-data.ts). The compiled service runs alone in its process (pipeline-bridge.mjs: dist/
// under plain node) against the reseller sandbox seeded with the book's licences. The bench logs
// in with the admin token as an operator's browser does, then asks for each page in rounds that
// alternate with bare Express answering a page of the same size (bare-page-server.mjs), so both
// share the machine's noise. Per page: the wall time over loopback (request sent to the last byte
// read), the time inside the server (server-time.mjs: parsed request to the last byte handed to
// the kernel), p50/p99/max, the ratio to bare Express, and PASS/FAIL against the 50 ms.
// BENCH_SCALE=0.1 shrinks the book; BENCH_STORES=sqlite (or postgres) measures one store;
// BENCH_REQUESTS per page (default 300), asked BENCH_ROUND at a time (default 50); BENCH_PAGES, a
// regular expression: only the pages whose names match (e.g. to profile one with BENCH_CPU_PROF).
// BENCH_DATA_DIR: the SQLite data set is built there and kept, and a later run reuses it (a few
// minutes saved; its times are relative to when it was built, so reuse it within the day).
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_SANDBOX_TOKENS, MAIN_RESELLER_ID } from "../src/vocabulary/sandbox-identity.js";
import { startChild } from "./child.js";
import { startBenchCluster, type BenchCluster } from "./scale-postgres.js";
import { LONG, LONG_HISTORY, seedConsole } from "./console-data.js";
import { emailOf, ipOf, migrateFresh, openBulk, sandboxState, seedBook, serviceIdOf, type StoreKind } from "./scale-data.js";
import { markdownTable } from "./report.js";

const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const SERVICES = Math.round(100_000 * SCALE);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 300);
const ROUND = Math.min(REQUESTS, Number(process.env.BENCH_ROUND ?? 50));
const STORES = (process.env.BENCH_STORES ?? "sqlite,postgres").split(",") as StoreKind[];
const ONLY = process.env.BENCH_PAGES ? new RegExp(process.env.BENCH_PAGES) : undefined;
const DATA_DIR = process.env.BENCH_DATA_DIR;
const TARGET_MS = 50;
const ADMIN = "bench-admin-token-0000";
const SECRET = "whsec_" + Buffer.from("bench-console-secret-000").toString("base64");
const log = (s: string) => process.stderr.write(`${s}\n`);

interface PageSpec {
  name: string;
  path: (k: number) => string;
  /** What the page must show, so a fast error page is not measured as a fast page. */
  shows: (k: number) => string;
  /** The reseller call the page waits for, asked of the sandbox directly too: how much of the page's time is the upstream's. */
  upstream?: (k: number) => string;
}
/** Another licence for each request, spread over the book (7919 is prime: every service in turn). */
const pick = (k: number) => 1 + ((k * 7919) % (SERVICES - 1));
/** The service ids in the listing's order (byte order, as both stores sort them), for cursors with a full page after them. */
const listed = Array.from({ length: SERVICES }, (_, i) => serviceIdOf(i)).sort();
const cursorAt = (k: number) => listed[pick(k) % (SERVICES - 60)]!;
const PAGES: PageSpec[] = [
  { name: "overview", path: () => "/console", shows: () => "Renewals, next 7 days" },
  { name: "licences: search by e-mail", path: (k) => `/console/licences?q=${encodeURIComponent(emailOf(pick(k)))}`, shows: (k) => `>${serviceIdOf(pick(k))}<` },
  { name: "licences: search by IP", path: (k) => `/console/licences?q=${ipOf(pick(k))}`, shows: (k) => `>${serviceIdOf(pick(k))}<` },
  { name: "licences: search by service id", path: (k) => `/console/licences?q=${serviceIdOf(pick(k))}`, shows: (k) => `>${serviceIdOf(pick(k))}<` },
  { name: "licences: list, first page", path: () => "/console/licences", shows: () => `>${serviceIdOf(0)}<` },
  { name: "licences: list, a later page (cursor)", path: (k) => `/console/licences?q=&status=&after=${cursorAt(k)}&limit=50`, shows: () => "Next page" },
  { name: `licence page, long history (${LONG_HISTORY + 10} entries)`, path: () => `/console/licences/${LONG}`, shows: () => "entry 1999 of the long history" },
  {
    name: "licence page, another each time (10 entries, install command read upstream)",
    path: (k) => `/console/licences/${serviceIdOf(pick(k))}`,
    shows: (k) => `Licence ${serviceIdOf(pick(k))}`,
    upstream: (k) => `/license/install-command?ip=${ipOf(pick(k))}&type=cloudlinux`,
  },
  { name: "jobs", path: () => "/console/jobs", shows: () => "Failed (" },
  { name: "reconcile (the page)", path: () => "/console/reconcile", shows: () => "<form" },
  { name: "adoption (the upload page)", path: () => "/console/adoption", shows: () => "<form" },
  { name: "audit", path: () => "/console/audit", shows: () => "licence.suspend" },
];

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const ms = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(1));
interface Spread {
  p50: number;
  p99: number;
  max: number;
}
function spread(values: number[]): Spread {
  const s = [...values].sort((a, b) => a - b);
  return { p50: pct(s, 50), p99: pct(s, 99), max: s[s.length - 1]! };
}
const show = (s: Spread) => `${ms(s.p50)} / ${ms(s.p99)} / ${ms(s.max)}`;

interface Row {
  page: string;
  store: StoreKind;
  bytes: number;
  wall: Spread;
  server: Spread;
  bare: Spread;
  bareServer: Spread;
  upstream?: Spread;
}
const rows: Row[] = [];

/** One GET, its body read whole; the wall time in ms. */
async function timedGet(url: string, headers: Record<string, string>): Promise<{ ms: number; status: number; text: string }> {
  const t = performance.now();
  const r = await fetch(url, { headers, redirect: "manual" });
  const text = await r.text();
  return { ms: performance.now() - t, status: r.status, text };
}

/** Logs in as a browser does: the login form's cookie and CSRF value, then the token; the session's cookie. */
async function login(base: string): Promise<string> {
  const form = await fetch(`${base}/console/login`);
  const loginCookie = form.headers.getSetCookie().map((c) => c.split(";")[0]!).join("; ");
  const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())?.[1];
  if (!csrf) throw new Error("the login page has no CSRF field");
  const r = await fetch(`${base}/console/login`, {
    method: "POST",
    headers: { cookie: loginCookie, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: ADMIN, csrf }),
    redirect: "manual",
  });
  await r.arrayBuffer();
  const session = r.headers.getSetCookie().find((c) => c.startsWith("lb_console="));
  if (r.status !== 303 || !session) throw new Error(`login: HTTP ${r.status}`);
  return session.split(";")[0]!;
}

type Server = Awaited<ReturnType<typeof startChild<{ url: string }>>>;
const drain = async (s: Server) => (await s.ask<{ times: number[] }>({ serverTimes: true })).times;

async function build(kind: StoreKind, where: string): Promise<void> {
  log(`[${kind}] migrating and seeding ${SERVICES} services, ${SERVICES * 10} history rows, ${SERVICES * 10} jobs, and the console's extras`);
  const t = performance.now();
  await migrateFresh(kind, where);
  const bulk = await openBulk(kind, where);
  const now = Date.now();
  await seedBook(bulk, { services: SERVICES, historyPerService: 10, jobsPerService: 10 }, now, (done) => {
    if (done % 20_000 === 0) log(`[${kind}]   ${done} services`);
  });
  await seedConsole(bulk, now, SERVICES);
  log(`[${kind}] seeded in ${((performance.now() - t) / 1000).toFixed(0)} s, ${((await bulk.sizeBytes()) / 1e6).toFixed(0)} MB`);
  await bulk.close();
}

async function measureStore(kind: StoreKind, where: string, dir: string, stateFile: string, bare: Server): Promise<void> {
  if (kind === "sqlite" && DATA_DIR && existsSync(where)) log(`[${kind}] reusing the data set in ${where}`);
  else await build(kind, where);
  const pages = PAGES.filter((p) => !ONLY || ONLY.test(p.name));
  const sandbox = await startChild<{ apiUrl: string }>("sandbox-server.ts", [], { BENCH_LATENCY_MS: "0", BENCH_SANDBOX_STATE: stateFile });
  let bridge: Server | undefined;
  try {
    bridge = await startChild<{ url: string }>("pipeline-bridge.mjs", [], {
      ...(kind === "sqlite" ? { DATABASE_PATH: where, DATABASE_URL: "" } : { DATABASE_URL: where, DATABASE_PATH: join(dir, "unused.db") }),
      PORT: "0",
      RESELLER_API_URL: sandbox.info.apiUrl,
      RESELLER_API_TOKEN: DEFAULT_SANDBOX_TOKENS.reseller,
      // The shipped catalogue also has Manage2 and CLN products, which a bridge given only the reseller refuses.
      PRODUCTS_FILE: join(import.meta.dirname, "../config/products.json"),
      // The overview reads the balance (cached for a while) as a live service with an admin token does.
      RESELLER_ACCOUNT_ID: String(MAIN_RESELLER_ID),
      RESELLER_ADMIN_TOKEN: DEFAULT_SANDBOX_TOKENS.admin,
      RESELLER_SETTLE_SECONDS: "0",
      WEBHOOK_SECRETS: SECRET,
      ADMIN_TOKEN: ADMIN,
      ALLOW_PRIVATE_IPS: "true",
      CONSOLE: "on",
      BENCH_SERVER_TIME: "1",
    });
    const base = bridge.info.url;
    const session = { cookie: await login(base) };
    const upstreamAuth = { authorization: `Bearer ${DEFAULT_SANDBOX_TOKENS.reseller}` };

    // Warm-up (statements compiled, code optimised, the balance read once), and each page's size for its baseline.
    const bytes = new Map<PageSpec, number>();
    for (const p of pages) {
      for (let k = 0; k < 20; k++) {
        const r = await timedGet(base + p.path(REQUESTS + k), session);
        if (r.status !== 200 || !r.text.includes(p.shows(REQUESTS + k))) throw new Error(`${p.name} (${p.path(REQUESTS + k)}): HTTP ${r.status}, without "${p.shows(REQUESTS + k)}":\n${r.text.slice(0, 2000)}`);
        bytes.set(p, Buffer.byteLength(r.text));
      }
    }
    await drain(bridge);
    await drain(bare);

    const samples = new Map(pages.map((p) => [p, { wall: [] as number[], server: [] as number[], bare: [] as number[], bareServer: [] as number[], upstream: [] as number[] }]));
    for (let from = 0; from < REQUESTS; from += ROUND) {
      log(`[${kind}]   requests ${from} to ${Math.min(REQUESTS, from + ROUND) - 1} of each page`);
      for (const p of pages) {
        const s = samples.get(p)!;
        for (let k = from; k < Math.min(REQUESTS, from + ROUND); k++) {
          const r = await timedGet(base + p.path(k), session);
          if (r.status !== 200 || !r.text.includes(p.shows(k))) throw new Error(`${p.name} (${p.path(k)}): HTTP ${r.status}, without "${p.shows(k)}"`);
          s.wall.push(r.ms);
        }
        s.server.push(...(await drain(bridge)));
        for (let k = from; k < Math.min(REQUESTS, from + ROUND); k++) {
          const r = await timedGet(`${bare.info.url}/page/${bytes.get(p)!}`, {});
          if (r.status !== 200) throw new Error(`bare Express: HTTP ${r.status}`);
          s.bare.push(r.ms);
        }
        s.bareServer.push(...(await drain(bare)));
        for (let k = from; p.upstream && k < Math.min(REQUESTS, from + ROUND); k++) {
          const r = await timedGet(sandbox.info.apiUrl + p.upstream(k), upstreamAuth);
          if (r.status !== 200) throw new Error(`sandbox ${p.upstream(k)}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
          s.upstream.push(r.ms);
        }
      }
    }
    for (const p of pages) {
      const s = samples.get(p)!;
      const row: Row = {
        page: p.name,
        store: kind,
        bytes: bytes.get(p)!,
        wall: spread(s.wall),
        server: spread(s.server),
        bare: spread(s.bare),
        bareServer: spread(s.bareServer),
        ...(s.upstream.length ? { upstream: spread(s.upstream) } : {}),
      };
      rows.push(row);
      log(`[${kind}] ${p.name}: wall ${show(row.wall)} ms, in the server ${show(row.server)} ms; bare Express ${show(row.bare)} ms, in its server ${show(row.bareServer)} ms`);
    }
  } finally {
    await bridge?.stop();
    await sandbox.stop();
  }
}

function printTable(load: string): string {
  const head = ["page", "store", "KB", "wall p50 / p99 / max (ms)", "in server p50 / p99 / max", "bare Express wall p50 / p99 / max", "ratio p50 / p99", `p99 <= ${TARGET_MS} ms`];
  const cells = rows.map((r) => [
    r.page,
    r.store,
    (r.bytes / 1024).toFixed(1),
    show(r.wall),
    show(r.server),
    show(r.bare),
    `${(r.wall.p50 / r.bare.p50).toFixed(1)} / ${(r.wall.p99 / r.bare.p99).toFixed(1)}`,
    r.wall.p99 <= TARGET_MS ? "PASS" : "FAIL",
  ]);
  const failed = rows.filter((r) => r.wall.p99 > TARGET_MS).length;
  return [
    `## console (issue 26): ${SERVICES} licences, ${REQUESTS} requests per page in rounds of ${ROUND} alternating with bare Express; machine load before: ${load}`,
    "",
    ...markdownTable(head, cells),
    "",
    failed === 0 ? `every page's p99 within ${TARGET_MS} ms` : `${failed} of ${rows.length} FAIL the ${TARGET_MS} ms p99`,
    ...rows.filter((r) => r.upstream).map((r) => `[${r.store}] ${r.page}: the sandbox's own answer to the same calls, asked directly (wall p50 / p99 / max): ${show(r.upstream!)} ms`),
  ].join("\n");
}

const uptime = () => execFileSync("uptime", { encoding: "utf8" }).trim().replace(/^.*load average/, "load average");
const loadBefore = uptime();
log(`bench:console, ${loadBefore}`);
const dir = mkdtempSync(join(tmpdir(), "lb-bench-console-"));
let cluster: BenchCluster | undefined;
const bare = await startChild<{ url: string }>("bare-page-server.mjs");
try {
  const stateFile = sandboxState(dir, SERVICES);
  for (const kind of STORES) {
    if (kind === "sqlite") {
      await measureStore("sqlite", join(DATA_DIR ?? dir, `console-${SERVICES}.db`), dir, stateFile, bare);
      continue;
    }
    const started = await startBenchCluster();
    if ("skip" in started) {
      console.log(`PostgreSQL: ${started.skip}`);
      continue;
    }
    cluster = started;
    await measureStore("postgres", cluster.url, dir, stateFile, bare);
  }
} finally {
  await bare.stop();
  await cluster?.stop();
  rmSync(dir, { recursive: true, force: true });
}
console.log(printTable(loadBefore));
console.log(`\nmachine load after: ${uptime()}`);
