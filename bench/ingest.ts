// Ingest: signed service.created webhooks (unique ids, valid signatures, durable commit) against
// the bridge, and the same load against bare Express 5 on the same machine in the same script.
import { randomBytes } from "node:crypto";
import autocannon from "autocannon";
import { signWebhook } from "../src/webhooks/signature.js";
import { startChild } from "./child.js";
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

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);

async function measure(mode: "bare" | "bridge") {
  const server = await startChild<{ port: number }>("ingest-server.mjs", [mode], { BENCH_SECRET: secret });
  try {
    await load(server.info.port, WARMUP);
    const r = await load(server.info.port, SECONDS);
    const ok = (r["2xx"] ?? 0) > 0 && r.non2xx === 0 && r.errors === 0;
    if (!ok) throw new Error(`${mode}: ${r.non2xx} non-2xx answers and ${r.errors} errors out of ${r.requests.total}`);
    return r;
  } finally {
    await server.stop();
  }
}

export async function runIngest(): Promise<Figure[]> {
  // Alternating rounds, so a noisy neighbour on this shared machine weighs on both sides alike.
  const bare: autocannon.Result[] = [];
  const ours: autocannon.Result[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    bare.push(await measure("bare"));
    ours.push(await measure("bridge"));
  }
  const rps = (rs: autocannon.Result[]) => median(rs.map((r) => r.requests.average));
  const ratio = median(ours.map((o, i) => o.requests.average / bare[i]!.requests.average));
  const p99 = median(ours.map((r) => r.latency.p99));
  const p99Ratio = median(ours.map((o, i) => o.latency.p99 / bare[i]!.latency.p99));
  const figures: Figure[] = [
    { name: "bare_express_rps", value: rps(bare), unit: "req/s" },
    { name: "bare_express_p99_ms", value: median(bare.map((r) => r.latency.p99)), unit: "ms" },
    { name: "ingest_rps", value: rps(ours), unit: "req/s" },
    { name: "ingest_p50_ms", value: median(ours.map((r) => r.latency.p50)), unit: "ms" },
    { name: "ingest_p99_ms", value: p99, unit: "ms" },
    { name: "ingest_vs_bare_express", value: ratio, target: ">= 0.60", met: ratio >= 0.6 },
    { name: "ingest_p99_vs_bare_express", value: p99Ratio, target: "<= 1.5", met: p99Ratio <= 1.5 },
  ];
  report(`ingest (${CONNECTIONS} connections, ${SECONDS} s after a ${WARMUP} s warm-up, median of ${ROUNDS} alternating rounds)`, figures);
  return figures;
}

if (import.meta.url === `file://${process.argv[1]}`) await runIngest();
