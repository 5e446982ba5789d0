// `npm run bench:reseller`: the reseller transport's cost per call, the fetch path it replaced
// (bench/fetch-transport.ts) beside src/reseller/transport.ts, in one process against the
// sandbox in its own process (so process.cpuUsage counts the client only). Each order is a
// register (POST, JSON) and an install-command (GET), as a cPanel order makes; sequential and
// concurrent runs, the paths alternating round by round so both share the machine's noise.
import { createTransport, type Call, type Transport } from "../src/reseller/transport.js";
import { startChild } from "./child.js";
import { createFetchTransport } from "./fetch-transport.js";
import { DEFAULT_SANDBOX_TOKENS } from "../src/vocabulary/sandbox-identity.js";

const CALLS = Number(process.env.BENCH_CALLS ?? 4000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP_CALLS = 400;
const TOKEN = DEFAULT_SANDBOX_TOKENS.reseller;

interface Path {
  name: string;
  make(): Transport;
}

const PATHS: Path[] = [
  { name: "fetch (before #14)", make: () => createFetchTransport({ token: TOKEN }) },
  { name: "http.Agent pool (after)", make: () => createTransport({ token: TOKEN }) },
];

interface Run {
  path: string;
  mode: "sequential" | "concurrent";
  calls: number;
  wallMs: number;
  cpuMs: number;
}

let nextIp = 0;
function ip(): string {
  const n = nextIp++;
  return `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
}

function orderCalls(apiUrl: string): Call[] {
  const address = ip();
  const headers = { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json", Accept: "application/json" };
  const install = new URL(`${apiUrl}/license/install-command`);
  install.searchParams.set("ip", address);
  install.searchParams.set("type", "cpanel");
  return [
    { operation: "v1.register", method: "POST", url: new URL(`${apiUrl}/license/register`), headers, json: { ip: address, type: "cpanel", billingcycle: 1 }, readOnly: false },
    { operation: "v1.installCommand", method: "GET", url: install, headers, readOnly: true },
  ];
}

async function order(transport: Transport, apiUrl: string): Promise<void> {
  for (const call of orderCalls(apiUrl)) {
    const answer = await transport.send(call);
    if (answer.status !== 200) throw new Error(`${call.operation}: HTTP ${answer.status} ${JSON.stringify(answer.body)}`);
  }
}

/** Every run starts from an empty sandbox, so a later run does not pay for an earlier one's licences. */
async function resetSandbox(url: string): Promise<void> {
  const res = await fetch(`${url}/_sandbox/reset`, { method: "POST", headers: { authorization: `Bearer ${DEFAULT_SANDBOX_TOKENS.admin}` } });
  if (!res.ok) throw new Error(`sandbox reset: HTTP ${res.status}`);
  await res.arrayBuffer();
}

async function measure(path: Path, mode: Run["mode"], calls: number, sandboxUrl: string, apiUrl: string): Promise<Run> {
  await resetSandbox(sandboxUrl);
  const transport = path.make();
  const orders = Math.ceil(calls / 2);
  const lanes = mode === "sequential" ? 1 : CONCURRENCY;
  let started = 0;
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (started < orders) {
        started++;
        await order(transport, apiUrl);
      }
    }),
  );
  const wallMs = performance.now() - t0;
  const used = process.cpuUsage(cpu);
  await transport.close();
  return { path: path.name, mode, calls: orders * 2, wallMs, cpuMs: (used.user + used.system) / 1000 };
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

const sandbox = await startChild<{ apiUrl: string; url: string }>("sandbox-server.ts", [], { BENCH_LATENCY_MS: "0" });
try {
  const { apiUrl, url } = sandbox.info;
  for (const path of PATHS) {
    await measure(path, "sequential", WARMUP_CALLS, url, apiUrl);
    await measure(path, "concurrent", WARMUP_CALLS, url, apiUrl);
  }
  const runs: Run[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? PATHS : [...PATHS].reverse();
    for (const mode of ["sequential", "concurrent"] as const) {
      for (const path of order) runs.push(await measure(path, mode, CALLS, url, apiUrl));
    }
  }

  const rows = (["sequential", "concurrent"] as const).flatMap((mode) =>
    PATHS.map((path) => {
      const mine = runs.filter((r) => r.path === path.name && r.mode === mode);
      return {
        path: path.name,
        mode: mode === "concurrent" ? `concurrent (${CONCURRENCY})` : mode,
        callsPerS: median(mine.map((r) => (r.calls / r.wallMs) * 1000)),
        cpuMsPerCall: median(mine.map((r) => r.cpuMs / r.calls)),
      };
    }),
  );
  const head = ["path", "mode", "calls/s", "CPU ms/call"];
  const cells = rows.map((r) => [r.path, r.mode, r.callsPerS.toFixed(0), r.cpuMsPerCall.toFixed(3)]);
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((v, i) => (i >= 2 ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))).join("  ").trimEnd();
  console.log(`\n## reseller client (${CALLS} calls per run, median of ${ROUNDS} alternating rounds, Node ${process.versions.node})\n`);
  console.log(line(head));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const c of cells) console.log(line(c));
  console.log("");
  for (const r of rows) {
    const key = `${r.path === PATHS[0]!.name ? "fetch" : "transport"}_${r.mode.startsWith("concurrent") ? "concurrent" : "sequential"}`;
    console.log(`${key}_calls_per_s: ${r.callsPerS.toFixed(0)}`);
    console.log(`${key}_cpu_ms_per_call: ${r.cpuMsPerCall.toFixed(3)}`);
  }
} finally {
  await sandbox.stop();
}
