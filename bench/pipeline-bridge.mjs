// The bridge under measurement, alone in its process and run as production runs it: the compiled
// dist/ under plain node (no TypeScript loader). The pipeline's load client and the sandbox run
// elsewhere, so this process's CPU time and event-loop use are the bridge's own. The parent asks
// for `stats` over IPC; answering costs one COUNT query.
// BENCH_DIST: another build's dist/ to measure instead (e.g. an earlier commit's, side by side).
const dist = process.env.BENCH_DIST ? new URL(`file://${process.env.BENCH_DIST.replace(/\/?$/, "/")}`) : new URL("../dist/", import.meta.url);
const { loadConfig } = await import(new URL("config/load.js", dist).href);
const { createLogger } = await import(new URL("log/logger.js", dist).href);
const { startService } = await import(new URL("compose/service.js", dist).href);

const config = loadConfig({ env: process.env });
const service = await startService({ config, logger: createLogger({ level: process.env.BENCH_LOG_LEVEL ?? "warn", pretty: false }), renewalSchedule: false });

process.on("message", (msg) => {
  if (!msg?.stats) return;
  void (async () => {
    // (service.queue: builds from before the Store, for comparisons.)
    const counts = service.store ? await service.store.jobs.counts() : service.queue.counts();
    const stats = { counts, cpu: process.cpuUsage(), elu: performance.eventLoopUtilization() };
    if (msg.debug) {
      const text = await service.metrics.scrape();
      stats.debug = text
        .split("\n")
        .filter((line) => /_(sum|count)\{/.test(line) && /job_duration|upstream_call_duration/.test(line))
        .join("\n");
    }
    process.send(stats);
  })();
});

console.log(`READY ${JSON.stringify({ url: service.url })}`);
process.on("SIGTERM", () => void service.close().then(() => process.exit(0)));
