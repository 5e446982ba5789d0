// Ingest: signed service.created webhooks (unique ids, valid signatures, durable commit) against
// the bridge, and the same load, in the same script and alternating rounds, against bare Express 5
// and against the durable baseline (ingest-durable-baseline.mjs: the least a durable, verified
// intake must do: the signature, the fields by hand, an event row and a job row group-committed
// and fsynced before the 202).
import { randomBytes } from "node:crypto";
import autocannon from "autocannon";
import { signWebhook } from "../src/webhooks/signature.js";
import { startChild } from "./child.js";
import { perfWindow } from "./perf-window.js";
import { median, report, type Figure } from "./report.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 2);
const CONNECTIONS = 50;
const secret = `whsec_${randomBytes(24).toString("base64")}`;

let n = 0;
function nextRequest() {
  const i = ++n;
  const body = JSON.stringify({
    type: "service.created",
    service: {
      id: `bench-${process.pid}-${i}`,
      product_id: "12",
      billing_cycle: "monthly",
      ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      customer: { email: `c${i}@example.com`, name: "Bench Customer" },
    },
  });
  return { method: "POST" as const, path: "/webhooks/billing", headers: { "content-type": "application/json", ...signWebhook(secret, `msg_${process.pid}_${i}`, body) }, body };
}

// Signing is done before the clock starts, so the load generator spends its time sending.
function presign(count: number) {
  return Array.from({ length: count }, nextRequest);
}

async function load(port: number, seconds: number) {
  const pool = presign(Number(process.env.BENCH_PRESIGN ?? 20_000) * seconds);
  let i = 0;
  return autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [{ setupRequest: () => pool[i++] ?? nextRequest() }],
  });
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

type Mode = "bare" | "durable" | "bridge" | "service";
/** What ingest-server.mjs answers to `{ stats: true }`. */
interface ServerStats {
  cpu: NodeJS.CpuUsage;
  elu: { idle: number; active: number };
  /** The profile written, when asked for. */
  profile?: string;
  /** With BENCH_COUNT_SQL=1: statements run so far, by their text. */
  sql?: Record<string, number>;
}
/** autocannon's result, with the server's own CPU time per request and event-loop use over the measured load. */
type Run = autocannon.Result & { cpuUsPerRequest: number; elu: number };
const LABEL: Record<Mode, string> = { bare: "bare Express", durable: "durable baseline", bridge: "bridge", service: "bridge as the service builds it" };
/**
 * BENCH_INGEST_SERVICE=1 adds a fourth server to the rounds: the same route with what
 * src/compose/service.ts puts around it (ingest-server.mjs `service`: routers before it, guardAccept,
 * metrics, request lines at LOG_LEVEL=info). Printed, with no target.
 */
const WITH_SERVICE = process.env.BENCH_INGEST_SERVICE === "1";

async function measure(mode: Mode) {
  const server = await startChild<{ port: number }>("ingest-server.mjs", [mode], { BENCH_SECRET: secret });
  try {
    const warm = await load(server.info.port, WARMUP);
    // BENCH_PROFILE_DIR=dir: the CPU profile of the measured load, in dir (profile-window.mjs).
    const dir = process.env.BENCH_PROFILE_DIR;
    const before = await server.ask<ServerStats>({ stats: true, ...(dir ? { profile: "start" } : {}) });
    // BENCH_PERF_DIR=dir: `perf record` of the server over the measured load (perf-window.ts).
    const perf = process.env.BENCH_PERF_DIR ? perfWindow(process.env.BENCH_PERF_DIR, `ingest-${mode}`, server.child.pid!) : undefined;
    const r = await load(server.info.port, SECONDS);
    if (perf) console.error(`${LABEL[mode]}: ${r.requests.total} requests in ${await perf.stop()}`);
    const after = await server.ask<ServerStats>({ stats: true, ...(dir ? { profile: "stop", dir } : {}) });
    if (after.profile) console.error(`${LABEL[mode]}: ${r.requests.total} requests in ${after.profile}`);
    const ok = (r["2xx"] ?? 0) > 0 && r.non2xx === 0 && r.errors === 0;
    if (!ok) throw new Error(`${mode}: ${r.non2xx} non-2xx answers and ${r.errors} errors out of ${r.requests.total}`);
    // With BENCH_CPU_PROF (the whole process), the profile covers both loads: per-request costs divide by this.
    if (process.env.BENCH_CPU_PROF) console.error(`${LABEL[mode]} (pid ${server.child.pid}): ${warm.requests.total + r.requests.total} requests served (${r.requests.total} measured)`);
    if (after.sql) {
      // Write transactions (the group commits) over the measured load, and statements per request.
      const delta = (re: RegExp) => Object.entries(after.sql!).filter(([k]) => re.test(k)).reduce((n, [k, v]) => n + v - (before.sql?.[k] ?? 0), 0);
      const groups = delta(/^BEGIN/);
      const statements = delta(/./);
      console.error(`${LABEL[mode]}: ${groups} group commits for ${r.requests.total} requests (${(r.requests.total / groups).toFixed(1)} per group), ${(statements / r.requests.total).toFixed(1)} statements per request`);
    }
    const cpuUs = after.cpu.user - before.cpu.user + (after.cpu.system - before.cpu.system);
    const active = after.elu.active - before.elu.active;
    return { ...r, cpuUsPerRequest: cpuUs / r.requests.total, elu: active / (active + after.elu.idle - before.elu.idle) };
  } finally {
    await server.stop();
  }
}

export async function runIngest(): Promise<Figure[]> {
  // Alternating rounds, so a noisy neighbour on this shared machine weighs on all three alike;
  // the order rotates from round to round, so none is always first after a start-up.
  const runs: Record<Mode, Run[]> = { bare: [], durable: [], bridge: [], service: [] };
  // BENCH_INGEST_MODES=durable,bridge: only those servers (to profile one; the figures of a missing one are NaN).
  const only = process.env.BENCH_INGEST_MODES?.split(",");
  const order = (WITH_SERVICE ? (["bare", "durable", "bridge", "service"] as Mode[]) : (["bare", "durable", "bridge"] as Mode[])).filter((m) => !only || only.includes(m));
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < order.length; k++) {
      const mode = order[(round + k) % order.length]!;
      runs[mode].push(await measure(mode));
    }
  }
  const { bare, durable, bridge: ours, service } = runs;
  const cpu = (rs: Run[]) => median(rs.map((r) => r.cpuUsPerRequest));
  const rps = (rs: autocannon.Result[]) => median(rs.map((r) => r.requests.average));
  const p99 = (rs: autocannon.Result[]) => median(rs.map((r) => r.latency.p99));
  /** The median over rounds of a/b, each round's a against the same round's b. */
  const ratio = (a: autocannon.Result[], b: autocannon.Result[], of: (r: autocannon.Result) => number) => median(a.map((r, i) => (b[i] ? of(r) / of(b[i]) : NaN)));
  const throughput = (r: autocannon.Result) => r.requests.average;
  const tail = (r: autocannon.Result) => r.latency.p99;
  const vsBare = ratio(ours, bare, throughput);
  const p99VsBare = ratio(ours, bare, tail);
  const vsDurable = ratio(ours, durable, throughput);
  const p99VsDurable = ratio(ours, durable, tail);
  const figures: Figure[] = [
    { name: "bare_express_rps", value: rps(bare), unit: "req/s" },
    { name: "bare_express_p99_ms", value: p99(bare), unit: "ms" },
    { name: "durable_baseline_rps", value: rps(durable), unit: "req/s" },
    { name: "durable_baseline_p99_ms", value: p99(durable), unit: "ms" },
    { name: "durable_baseline_vs_bare_express", value: ratio(durable, bare, throughput) },
    { name: "durable_baseline_p99_vs_bare_express", value: ratio(durable, bare, tail) },
    // The server process's own CPU (all threads, user and system) per request over the measured load.
    { name: "bare_express_cpu_us_per_request", value: cpu(bare), unit: "µs" },
    { name: "durable_baseline_cpu_us_per_request", value: cpu(durable), unit: "µs" },
    { name: "ingest_cpu_us_per_request", value: cpu(ours), unit: "µs" },
    { name: "ingest_event_loop_utilization", value: median(ours.map((r) => r.elu)) },
    { name: "ingest_rps", value: rps(ours), unit: "req/s" },
    { name: "ingest_p50_ms", value: median(ours.map((r) => r.latency.p50)), unit: "ms" },
    { name: "ingest_p99_ms", value: p99(ours), unit: "ms" },
    { name: "ingest_vs_bare_express", value: vsBare, target: ">= 0.60", met: vsBare >= 0.6 },
    { name: "ingest_p99_vs_bare_express", value: p99VsBare, target: "<= 1.5", met: p99VsBare <= 1.5 },
    // Issue 24: against the least a durable, verified intake must do, measured in the same rounds.
    { name: "ingest_vs_durable_baseline", value: vsDurable, target: ">= 0.85", met: vsDurable >= 0.85 },
    { name: "ingest_p99_vs_durable_baseline", value: p99VsDurable, target: "<= 1.5", met: p99VsDurable <= 1.5 },
  ];
  if (WITH_SERVICE) {
    figures.push(
      { name: "ingest_service_rps", value: rps(service), unit: "req/s" },
      { name: "ingest_service_p99_ms", value: p99(service), unit: "ms" },
      { name: "ingest_service_cpu_us_per_request", value: cpu(service), unit: "µs" },
      { name: "ingest_service_vs_durable_baseline", value: ratio(service, durable, throughput) },
      { name: "ingest_service_p99_vs_durable_baseline", value: ratio(service, durable, tail) },
    );
  }
  report(`ingest (${CONNECTIONS} connections, ${SECONDS} s after a ${WARMUP} s warm-up, median of ${ROUNDS} rounds alternating bare Express, the durable baseline${WITH_SERVICE ? ", the bridge and the bridge as the service builds it" : " and the bridge"})`, figures);
  return figures;
}

if (import.meta.url === `file://${process.argv[1]}`) await runIngest();
