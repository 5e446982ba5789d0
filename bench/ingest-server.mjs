// One server per process, so the load generator never shares its event loop: `bare` is Express 5
// parsing the same JSON body and answering 202; `durable` is the durable baseline
// (ingest-durable-baseline.mjs: signature, fields checked by hand, an event row and a job row
// group-committed and fsynced before the 202, nothing from src/); `bridge` is the real webhook
// route (raw body, signature, schema, catalogue, group-committed SQLite transaction), from the
// compiled dist/ under plain node, as production runs it (`npm run bench` builds it first).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import express from "express";
import { profileWindow } from "./profile-window.mjs";
import { countStatements } from "./sql-count.mjs";

// BENCH_COUNT_SQL=1: statements counted by text (sql-count.mjs), sent with the stats: the
// BEGINs tell how many deliveries each group commit took.
const sql = process.env.BENCH_COUNT_SQL === "1" ? countStatements() : undefined;

// BENCH_DIST: another build's dist/ to measure instead (an earlier commit's, for before and after).
const dist = process.env.BENCH_DIST ? new URL(`file://${process.env.BENCH_DIST.replace(/\/?$/, "/")}`) : new URL("../dist/", import.meta.url);
const load = (path) => import(new URL(path, dist).href);

const mode = process.argv[2];
const secret = process.env.BENCH_SECRET;

function bare() {
  const app = express();
  app.post("/webhooks/billing", express.json({ limit: "64kb" }), (req, res) => {
    res.status(202).json({ event_id: "evt", status: "accepted", type: req.body?.type });
  });
  return app;
}

let dir;
let closeDurable;

async function durable() {
  const { durableBaseline } = await import("./ingest-durable-baseline.mjs");
  dir = mkdtempSync(join(tmpdir(), "lb-bench-durable-"));
  const baseline = durableBaseline({ secret, path: join(dir, "baseline.db") });
  closeDurable = baseline.close;
  return baseline.app;
}

/**
 * `bridge`: the webhook route alone in the app, its request lines at BENCH_LOG_LEVEL (default
 * warn: none), as this bench has always measured it. `service`: the HTTP surface as
 * src/compose/service.ts builds it for the same route: the health and API-document routers mounted
 * before it, the intake behind guardAccept (which asks the store whether its file is lost), the
 * metrics observer, the configured secrets masked in request lines, and LOG_LEVEL's default,
 * info: a pino line per request (to stdout, which the bench reads and drops).
 */
async function bridge(asService) {
  const [{ loadConfig }, { createApp }, { systemClock }, { createLogger }, { openStore }, { billingSource }, { createIntake }, { webhookRouter }, { secretKey }] =
    await Promise.all(
      ["config/load.js", "http/app.js", "clock.js", "log/logger.js", "store/open.js", "webhooks/billing-source.js", "intake/intake.js", "webhooks/route.js", "webhooks/signature.js"].map(load),
    );
  dir = mkdtempSync(join(tmpdir(), "lb-bench-ingest-"));
  // A live configuration needs the reseller's URL and token; the intake never calls it.
  const config = loadConfig({
    env: {
      DATABASE_PATH: join(dir, "bench.db"),
      WEBHOOK_SECRETS: secret,
      ADMIN_TOKEN: "bench-admin-token-000",
      ALLOW_PRIVATE_IPS: "true",
      RESELLER_API_URL: "http://127.0.0.1:9/api/v1",
      RESELLER_API_TOKEN: "bench-reseller-token-000",
    },
  });
  const logger = createLogger({ level: process.env.BENCH_LOG_LEVEL ?? (asService ? "info" : "warn"), pretty: false });
  const store = await openStore(config, { clock: systemClock, logger, serving: true });
  // BENCH_INGEST_ACCEPT=instant: the route with an intake that stores nothing and accepts every
  // event at once, so the route's own cost (HTTP, signature, schema, answer) is seen apart from
  // the intake's (diagnostic only: no durability, no target).
  const intake =
    process.env.BENCH_INGEST_ACCEPT === "instant"
      ? async (_source, items) => items.map(() => ({ status: "accepted", eventId: "evt_instant" }))
      : createIntake({ store, catalog: config.catalog, allowPrivateIps: config.ALLOW_PRIVATE_IPS });
  const route = (accept, observer) => webhookRouter(billingSource([secretKey(secret)]), { accept, catalog: config.catalog, clock: systemClock, logger, observer });
  if (!asService) return createApp({ logger, isBusy: (err) => store.isBusy(err), routers: [route(intake)] });

  const [{ secretValues }, { healthRouter }, { openApiRouter }, { createMetrics }, { guardAccept }] = await Promise.all(
    ["config/describe.js", "admin/health-routes.js", "admin/openapi.js", "observability/metrics.js", "intake/availability.js"].map(load),
  );
  const metrics = createMetrics();
  const lost = () => store.lost();
  const accept = guardAccept(intake, () => (lost() ? { message: "the database is unavailable", retryAfterSeconds: 60 } : undefined));
  return createApp({
    logger: logger.child({ component: "http" }),
    isBusy: (err) => store.isBusy(err),
    secrets: secretValues(config),
    trustProxy: config.TRUST_PROXY,
    routers: [healthRouter({ store, metrics, upstreamUrls: [], databaseLost: lost, draining: () => false }), openApiRouter(), route(accept, metrics.webhooks)],
  });
}

const app = mode === "bare" ? bare() : mode === "durable" ? await durable() : await bridge(mode === "service");
const server = app.listen(0, "127.0.0.1", () => {
  const address = server.address();
  console.log(`READY ${JSON.stringify({ port: typeof address === "object" && address ? address.port : 0 })}`);
});
// The load client asks for this process's CPU time (user and system µs, all threads) and
// event-loop use before and after its measured load.
// With `profile`, the measured window's CPU profile is started or written (profile-window.mjs).
process.on("message", (msg) => {
  if (!msg?.stats) return;
  void (async () => {
    const stats = { cpu: process.cpuUsage(), elu: performance.eventLoopUtilization(), ...(sql ? { sql: sql.snapshot() } : {}) };
    const profile = await profileWindow(msg, `ingest-${mode}`);
    process.send({ ...stats, ...(profile ? { profile } : {}) });
  })();
});
process.on("SIGTERM", () =>
  server.close(async () => {
    await closeDurable?.();
    if (dir) rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }),
);
