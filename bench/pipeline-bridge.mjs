// The bridge under measurement, alone in its process and run as production runs it: the compiled
// dist/ under plain node (no TypeScript loader). The pipeline's load client and the sandbox run
// elsewhere, so this process's CPU time and event-loop use are the bridge's own. The parent asks
// for `stats` over IPC; answering costs one COUNT query. With `profile`, the CPU profile of the
// measured window is started or written (profile-window.mjs).
// BENCH_COUNT_SQL=1: the statements it runs, counted by their text (sql-count.mjs).
// BENCH_DIST: another build's dist/ to measure instead (e.g. an earlier commit's, side by side).
// BENCH_SERVER_TIME=1: each request's time inside this process (server-time.mjs), sent when the
// parent asks `{ serverTimes: true }` (bench/console.ts).
import { profileWindow } from "./profile-window.mjs";
import { recordServerTimes } from "./server-time.mjs";
import { countStatements } from "./sql-count.mjs";

// BENCH_COUNT_SQL=1: every statement counted by its text (sql-count.mjs), sent with the stats.
const sql = process.env.BENCH_COUNT_SQL === "1" ? countStatements() : undefined;
const serverTimes = process.env.BENCH_SERVER_TIME === "1" ? recordServerTimes() : undefined;

const dist = process.env.BENCH_DIST ? new URL(`file://${process.env.BENCH_DIST.replace(/\/?$/, "/")}`) : new URL("../dist/", import.meta.url);
const { loadConfig } = await import(new URL("config/load.js", dist).href);
const { createLogger } = await import(new URL("log/logger.js", dist).href);
const { startService } = await import(new URL("compose/service.js", dist).href);

const config = loadConfig({ env: process.env });
const service = await startService({ config, logger: createLogger({ level: process.env.BENCH_LOG_LEVEL ?? "warn", pretty: false }), renewalSchedule: false });

process.on("message", (msg) => {
  if (msg?.serverTimes && serverTimes) return process.send({ times: serverTimes.drain() });
  // The statements so far and nothing else: the stats below run statements of their own.
  if (msg?.statements) return process.send({ sql: sql?.snapshot() ?? {} });
  if (!msg?.stats) return;
  void (async () => {
    // (service.queue: builds from before the Store, for comparisons.)
    const counts = service.store ? await service.store.jobs.counts() : service.queue.counts();
    const stats = { counts, cpu: process.cpuUsage(), elu: performance.eventLoopUtilization(), ...(sql ? { sql: sql.snapshot() } : {}) };
    if (msg.debug) {
      const text = await service.metrics.scrape();
      stats.debug = text
        .split("\n")
        .filter((line) => /_(sum|count)\{/.test(line) && /job_duration|upstream_call_duration/.test(line))
        .join("\n");
    }
    const profile = await profileWindow(msg, "pipeline-bridge");
    process.send({ ...stats, ...(profile ? { profile } : {}) });
  })();
});

console.log(`READY ${JSON.stringify({ url: service.url })}`);
process.on("SIGTERM", () => void service.close().then(() => process.exit(0)));
