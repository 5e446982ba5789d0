// One server per process, so the load generator never shares its event loop: `bare` is Express 5
// parsing the same JSON body and answering 202; `bridge` is the real webhook route (raw body,
// signature, schema, catalogue, group-committed SQLite transaction).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import express from "express";
import { loadConfig } from "../src/config/load.js";
import { createApp } from "../src/http/app.js";
import { systemClock } from "../src/clock.js";
import { createLogger } from "../src/log/logger.js";
import { openStore } from "../src/store/open.js";
import { billingSource } from "../src/webhooks/billing-source.js";
import { createIntake } from "../src/webhooks/intake.js";
import { webhookRouter } from "../src/webhooks/route.js";
import { secretKey } from "../src/webhooks/signature.js";

const mode = process.argv[2];
const secret = process.env.BENCH_SECRET!;

function bare() {
  const app = express();
  app.post("/webhooks/billing", express.json({ limit: "64kb" }), (req, res) => {
    res.status(202).json({ event_id: "evt", status: "accepted", type: (req.body as { type?: string }).type });
  });
  return app;
}

let dir: string | undefined;

async function bridge() {
  dir = mkdtempSync(join(tmpdir(), "lb-bench-ingest-"));
  const config = loadConfig({ env: { DATABASE_PATH: join(dir, "bench.db"), WEBHOOK_SECRETS: secret, ADMIN_TOKEN: "bench-admin-token-000", ALLOW_PRIVATE_IPS: "true" } });
  const logger = createLogger({ level: process.env.BENCH_LOG_LEVEL ?? "warn", pretty: false });
  const store = await openStore(config, { clock: systemClock, logger, serving: true });
  const accept = createIntake({ store, catalog: config.catalog, allowPrivateIps: config.ALLOW_PRIVATE_IPS });
  return createApp({ logger, isBusy: (err) => store.isBusy(err), routers: [webhookRouter(billingSource([secretKey(secret)]), { accept, catalog: config.catalog, clock: systemClock, logger })] });
}

const app = mode === "bare" ? bare() : await bridge();
const server = app.listen(0, "127.0.0.1", () => {
  const address = server.address();
  console.log(`READY ${JSON.stringify({ port: typeof address === "object" && address ? address.port : 0 })}`);
});
process.on("SIGTERM", () =>
  server.close(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }),
);
