// Pipeline: service.created events through the real job runner to the sandbox (own process,
// 50 ms added per upstream call) until every licence is active and its customer mailed, against
// the ideal: events × upstream calls per event × latency ÷ concurrency.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config/load.js";
import { createLogger } from "../src/log/logger.js";
import { DEFAULT_SANDBOX_TOKENS } from "../src/sandbox/app.js";
import { startService } from "../src/service.js";
import { signWebhook } from "../src/webhooks/signature.js";
import { startChild } from "./child.js";
import { report, type Figure } from "./report.js";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1000);
const LATENCY_MS = 50;
const CONCURRENCY = 16;
/** register + install-command for a cpanel licence. */
const CALLS_PER_EVENT = 2;
const SECRET = "whsec_" + Buffer.from("bench-pipeline-secret-000").toString("base64");

export async function runPipeline(): Promise<Figure[]> {
  const sandbox = await startChild<{ apiUrl: string; legacyUrl: string }>("sandbox-server.ts", [], { BENCH_LATENCY_MS: String(LATENCY_MS) });
  const dir = mkdtempSync(join(tmpdir(), "lb-bench-pipeline-"));
  const config = loadConfig({
    env: {
      DATABASE_PATH: join(dir, "bench.db"),
      PORT: "0",
      RESELLER_API_URL: sandbox.info.apiUrl,
      RESELLER_API_TOKEN: DEFAULT_SANDBOX_TOKENS.reseller,
      WEBHOOK_SECRETS: SECRET,
      ADMIN_TOKEN: "bench-admin-token-000",
      WORKER_CONCURRENCY: String(CONCURRENCY),
    },
  });
  const service = await startService({ config, logger: createLogger({ level: "warn", pretty: false }), renewalSchedule: false });
  try {
    const started = performance.now();
    const elu = performance.eventLoopUtilization();
    // Events arrive over HTTP, 50 at a time, while the runner already works on the first ones.
    for (let i = 0; i < EVENTS; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, EVENTS - i) }, (_, k) => {
          const n = i + k;
          const body = JSON.stringify({
            type: "service.created",
            service: { id: `p${n}`, product_id: "12", billing_cycle: "monthly", ip: `198.18.${n >> 8}.${n & 255}`, customer: { email: `c${n}@example.com` } },
          });
          return fetch(`${service.url}/webhooks/billing`, {
            method: "POST",
            headers: { "content-type": "application/json", ...signWebhook(SECRET, `pipe-${n}`, body) },
            body,
          }).then((r) => {
            if (r.status !== 202) throw new Error(`event ${n}: HTTP ${r.status}`);
          });
        }),
      );
    }
    // Every order's two jobs (registration, mail) succeeded: nothing queued or running is left.
    for (;;) {
      const c = await service.store.jobs.counts();
      if (c.failed || c.blocked) throw new Error(`jobs failed or blocked: ${JSON.stringify(c)}`);
      if (c.succeeded >= EVENTS * 2 && c.queued === 0 && c.running === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const actualMs = performance.now() - started;
    const busy = performance.eventLoopUtilization(elu).utilization;
    const idealMs = (EVENTS * CALLS_PER_EVENT * LATENCY_MS) / CONCURRENCY;
    const efficiency = idealMs / actualMs;
    const figures: Figure[] = [
      { name: "pipeline_events", value: EVENTS },
      { name: "pipeline_ideal_ms", value: idealMs, unit: "ms" },
      { name: "pipeline_actual_ms", value: actualMs, unit: "ms" },
      { name: "pipeline_efficiency", value: efficiency, target: ">= 0.80", met: efficiency >= 0.8 },
      // How busy the bridge's event loop was: near 1 means CPU, not upstream latency, set the pace.
      { name: "pipeline_event_loop_utilization", value: busy },
    ];
    if (process.env.BENCH_DEBUG) {
      const text = await service.metrics.scrape();
      for (const line of text.split("\n")) if (/_(sum|count)\{/.test(line) && /job_duration|upstream_call_duration/.test(line)) console.error(line);
    }
    report(`pipeline (${EVENTS} events, ${LATENCY_MS} ms per upstream call, WORKER_CONCURRENCY=${CONCURRENCY})`, figures);
    return figures;
  } finally {
    await service.close();
    await sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runPipeline();
