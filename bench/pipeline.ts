// Pipeline: service.created events through the real job runner to the sandbox (its own process,
// 50 ms added per upstream call) until every licence is active and its customer mailed, against
// the ideal: events × upstream calls per event × latency ÷ concurrency. Three processes: this
// one sends the webhooks (the load client); the bridge runs alone in `pipeline-bridge.mjs`, on
// the compiled dist/ under plain node as in production (`npm run bench` builds it first); the
// sandbox in `sandbox-server.ts`. The bridge's CPU time and event-loop use are read from its own
// process, so neither the load client nor the sandbox is counted in them.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { signWebhook } from "../src/webhooks/signature.js";
import { startChild } from "./child.js";
import { perfWindow } from "./perf-window.js";
import { median, report, type Figure } from "./report.js";
import { DEFAULT_SANDBOX_TOKENS } from "../src/vocabulary/sandbox-identity.js";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000);
const WARMUP_ORDERS = Number(process.env.BENCH_PIPELINE_WARMUP ?? 0);
const LATENCY_MS = 50;
const CONCURRENCY = 16;
/** register + install-command for a cpanel licence. */
const CALLS_PER_EVENT = 2;
const SECRET = "whsec_" + Buffer.from("bench-pipeline-secret-000").toString("base64");
const EFFICIENCY_TARGET = 0.85;
/** Issue 14: at most half the CPU per order of the build before it (commit 92fc307). */
const CPU_VS_BASELINE_TARGET = 0.5;

/** What `pipeline-bridge.mjs` answers to `{ stats: true }`. */
interface BridgeStats {
  counts: Record<"queued" | "running" | "succeeded" | "failed" | "blocked", number>;
  /** process.cpuUsage(): user and system microseconds since the process started. */
  cpu: NodeJS.CpuUsage;
  elu: { idle: number; active: number; utilization: number };
  debug?: string;
  /** The profile written, when asked for. */
  profile?: string;
  /** With BENCH_COUNT_SQL=1: statements run so far, by their text. */
  sql?: Record<string, number>;
}

function cpuMs(from: NodeJS.CpuUsage, to: NodeJS.CpuUsage): number {
  return (to.user - from.user + (to.system - from.system)) / 1000;
}

interface Run {
  actualMs: number;
  elu: number;
  cpuMsPerOrder: number;
  /** The part of it spent in the kernel (fsyncs, WAL writes, sockets). */
  systemMsPerOrder: number;
}

/** One run of EVENTS orders through a bridge built from `dist` (undefined: this checkout's dist/). */
async function runOnce(dist?: string): Promise<Run> {
  const sandbox = await startChild<{ apiUrl: string }>("sandbox-server.ts", [], { BENCH_LATENCY_MS: String(LATENCY_MS) });
  const dir = mkdtempSync(join(tmpdir(), "lb-bench-pipeline-"));
  const bridge = await startChild<{ url: string }>("pipeline-bridge.mjs", [], {
    ...(dist ? { BENCH_DIST: dist } : {}),
    DATABASE_PATH: join(dir, "bench.db"),
    PORT: "0",
    RESELLER_API_URL: sandbox.info.apiUrl,
    RESELLER_API_TOKEN: DEFAULT_SANDBOX_TOKENS.reseller,
    // The shipped catalogue also has Manage2 and CLN products, which a bridge given only the reseller refuses.
    PRODUCTS_FILE: join(import.meta.dirname, "../config/products.json"),
    RESELLER_SETTLE_SECONDS: "0",
    WEBHOOK_SECRETS: SECRET,
    ADMIN_TOKEN: "bench-admin-token-000",
    WORKER_CONCURRENCY: String(CONCURRENCY),
  });
  try {
    /** `count` orders over HTTP, 50 at a time, then until every one's two jobs (registration, mail) succeeded. */
    const orders = async (prefix: string, net: string, count: number, succeededBefore: number) => {
      // Events arrive over HTTP, 50 at a time, while the runner already works on the first ones.
      for (let i = 0; i < count; i += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, count - i) }, (_, k) => {
            const n = i + k;
            const body = JSON.stringify({
              type: "service.created",
              service: { id: `${prefix}${n}`, product_id: "12", billing_cycle: "monthly", ip: `${net}.${n >> 8}.${n & 255}`, customer: { email: `c${n}@example.com` } },
            });
            return fetch(`${bridge.info.url}/webhooks/billing`, {
              method: "POST",
              headers: { "content-type": "application/json", ...signWebhook(SECRET, `${prefix}-${n}`, body) },
              body,
            }).then((r) => {
              if (r.status !== 202) throw new Error(`event ${prefix}${n}: HTTP ${r.status}`);
            });
          }),
        );
      }
      // Nothing queued or running is left.
      for (;;) {
        const stats = await bridge.ask<BridgeStats>({ stats: true, debug: !!process.env.BENCH_DEBUG });
        const c = stats.counts;
        if (c.failed || c.blocked) throw new Error(`jobs failed or blocked: ${JSON.stringify(c)}`);
        if (c.succeeded >= succeededBefore + count * 2 && c.queued === 0 && c.running === 0) return stats;
        // Each look reads the job counts' table (a few rows) in the measured process, about 20 µs;
        // every 100 ms, as before, added 50 ms to the end of a run of 7 s on average (0.7 % of
        // the efficiency) that the bridge had not spent.
        await new Promise((r) => setTimeout(r, 10));
      }
    };
    // BENCH_PIPELINE_WARMUP=n: n orders through the same bridge before the measured ones, so that
    // the figures are those of a process whose code V8 has compiled (default 0: a fresh process,
    // as this bench always measured it).
    if (WARMUP_ORDERS > 0) await orders("w", "198.19", WARMUP_ORDERS, 0);

    // BENCH_PROFILE_DIR=dir: the bridge's CPU profile from the first event to the last job, in dir.
    const profileDir = process.env.BENCH_PROFILE_DIR;
    const before = await bridge.ask<BridgeStats>({ stats: true, ...(profileDir ? { profile: "start" } : {}) });
    // BENCH_PERF_DIR=dir: `perf record` of the bridge over the same window (perf-window.ts).
    const perfDir = process.env.BENCH_PERF_DIR;
    const perf = perfDir ? perfWindow(perfDir, "pipeline-bridge", bridge.child.pid!) : undefined;
    const started = performance.now();
    const after = await orders("p", "198.18", EVENTS, before.counts.succeeded);
    const actualMs = performance.now() - started;
    if (perf) console.error(`bridge: ${EVENTS} orders in ${await perf.stop()}`);
    if (profileDir) {
      const { profile } = await bridge.ask<BridgeStats>({ stats: true, profile: "stop", dir: profileDir });
      console.error(`bridge: ${EVENTS} orders in ${profile}`);
    }
    if (after.debug) console.error(after.debug);
    if (after.sql) printStatements(before.sql ?? {}, after.sql, dist);
    const active = after.elu.active - before.elu.active;
    const idle = after.elu.idle - before.elu.idle;
    return {
      actualMs,
      elu: active / (active + idle),
      cpuMsPerOrder: cpuMs(before.cpu, after.cpu) / EVENTS,
      systemMsPerOrder: (after.cpu.system - before.cpu.system) / 1000 / EVENTS,
    };
  } finally {
    await bridge.stop();
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** BENCH_COUNT_SQL=1: the statements one order ran, by text, most frequent first, and how many of them were transactions' own. */
function printStatements(before: Record<string, number>, after: Record<string, number>, dist?: string) {
  const rows = Object.entries(after)
    .map(([sql, n]) => [sql, (n - (before[sql] ?? 0)) / EVENTS] as const)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((s, [, n]) => s + n, 0);
  const of = (re: RegExp) => rows.filter(([sql]) => re.test(sql)).reduce((s, [, n]) => s + n, 0);
  console.error(`\nstatements per order (${dist ?? "this build"}): ${total.toFixed(2)}; BEGIN ${of(/^BEGIN/).toFixed(2)}, SAVEPOINT ${of(/^SAVEPOINT/).toFixed(2)}`);
  for (const [sql, n] of rows) console.error(`${n.toFixed(2).padStart(6)}  ${sql.length > 150 ? `${sql.slice(0, 147)}...` : sql}`);
}

/**
 * BENCH_BASELINE_DIST: another build's dist/ (e.g. an earlier commit's, `git worktree add` and
 * `npm run build` there) run in alternating rounds with this one, for the CPU-per-order ratio.
 */
export async function runPipeline(): Promise<Figure[]> {
  const baselineDist = process.env.BENCH_BASELINE_DIST;
  const rounds = baselineDist ? Number(process.env.BENCH_ROUNDS ?? 2) : 1;
  const ours: Run[] = [];
  const theirs: Run[] = [];
  for (let round = 0; round < rounds; round++) {
    if (baselineDist) theirs.push(await runOnce(baselineDist));
    ours.push(await runOnce());
  }
  const actualMs = median(ours.map((r) => r.actualMs));
  const idealMs = (EVENTS * CALLS_PER_EVENT * LATENCY_MS) / CONCURRENCY;
  const efficiency = idealMs / actualMs;
  const cpu = median(ours.map((r) => r.cpuMsPerOrder));
  const figures: Figure[] = [
    { name: "pipeline_events", value: EVENTS },
    { name: "pipeline_ideal_ms", value: idealMs, unit: "ms" },
    { name: "pipeline_actual_ms", value: actualMs, unit: "ms" },
    { name: "pipeline_efficiency", value: efficiency, target: `>= ${EFFICIENCY_TARGET}`, met: efficiency >= EFFICIENCY_TARGET },
    // How busy the bridge's event loop was: near 1 means CPU, not upstream latency, set the pace.
    { name: "pipeline_event_loop_utilization", value: median(ours.map((r) => r.elu)) },
    // Everything the bridge process spent (all its threads: SQLite, fsync, GC) per order.
    { name: "pipeline_cpu_ms_per_order", value: cpu, unit: "ms" },
    { name: "pipeline_cpu_system_ms_per_order", value: median(ours.map((r) => r.systemMsPerOrder)), unit: "ms" },
  ];
  if (baselineDist) {
    const baseCpu = median(theirs.map((r) => r.cpuMsPerOrder));
    figures.push(
      { name: "pipeline_baseline_efficiency", value: idealMs / median(theirs.map((r) => r.actualMs)) },
      { name: "pipeline_baseline_cpu_ms_per_order", value: baseCpu, unit: "ms" },
      { name: "pipeline_cpu_vs_baseline", value: cpu / baseCpu, target: `<= ${CPU_VS_BASELINE_TARGET}`, met: cpu / baseCpu <= CPU_VS_BASELINE_TARGET },
    );
  }
  const label = baselineDist ? `, median of ${rounds} rounds alternating with the baseline ${baselineDist}` : "";
  const warm = WARMUP_ORDERS > 0 ? `, after ${WARMUP_ORDERS} warm-up orders` : "";
  report(`pipeline (${EVENTS} events, ${LATENCY_MS} ms per upstream call, WORKER_CONCURRENCY=${CONCURRENCY}, bridge in its own process${warm}${label})`, figures);
  return figures;
}

if (import.meta.url === `file://${process.argv[1]}`) await runPipeline();
