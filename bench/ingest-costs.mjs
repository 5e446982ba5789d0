// What each step of a delivery costs in the bridge's intake and in the durable baseline
// (ingest-durable-baseline.mjs), one step at a time in one process, on the compiled dist/ under
// plain node (`npm run build` first): `node bench/ingest-costs.mjs` (issue 24). CPU time per
// delivery (process.cpuUsage: user and system, every thread, so the fsyncs on the thread pool
// count), the median of BENCH_REPEATS runs over BENCH_DELIVERIES pre-signed service.created
// deliveries; the writes go 50 at a time (BENCH_BATCH), as the ingest bench's 50 connections
// send them, through the group commit. The HTTP server and Express are not in these figures: the ingest bench
// measures them (its *_cpu_us_per_request figures), and the difference is theirs.
import { Buffer } from "node:buffer";
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { durableWriter, fieldProblems, verify } from "./ingest-durable-baseline.mjs";

const dist = new URL("../dist/", import.meta.url);
const load = (path) => import(new URL(path, dist).href);
const [{ loadConfig }, { openStore }, { systemClock }, { createLogger }, { billingSource }, { billingEventSchema }, { createIntake }, { secretKey }, { requestLog }, { loggablePath }, { businessErrors }] =
  await Promise.all(
    [
      "config/load.js",
      "store/open.js",
      "clock.js",
      "log/logger.js",
      "webhooks/billing-source.js",
      "intake/event-schema.js",
      "intake/intake.js",
      "webhooks/signature.js",
      "http/request-log.js",
      "http/loggable-path.js",
      "intake/rules.js",
    ].map(load),
  );

const N = Number(process.env.BENCH_DELIVERIES ?? 10_000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 5);
const BATCH = Number(process.env.BENCH_BATCH ?? 50);
const secret = `whsec_${Buffer.from("bench-ingest-costs-secret-0000").toString("base64")}`;
const key = secretKey(secret);
const dir = mkdtempSync(join(tmpdir(), "lb-bench-costs-"));
let round = 0;

/** N deliveries as the ingest bench sends them (unique ids and IPs), signed. */
function deliveries() {
  round++;
  const ts = String(Math.floor(Date.now() / 1000));
  return Array.from({ length: N }, (_, k) => {
    const i = round * N + k;
    const text = JSON.stringify({
      type: "service.created",
      service: {
        id: `bench-${round}-${i}`,
        product_id: "12",
        billing_cycle: "monthly",
        ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
        customer: { email: `c${i}@example.com`, name: "Bench Customer" },
      },
    });
    const id = `msg_${round}_${i}`;
    const headers = {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": ts,
      "webhook-signature": `v1,${createHmac("sha256", key).update(`${id}.${ts}.`).update(text).digest("base64")}`,
    };
    const raw = Buffer.from(text);
    return { text, raw, headers, body: JSON.parse(text), req: { headers, header: (name) => headers[name.toLowerCase()] } };
  });
}

/** CPU µs per delivery of `step` (sync, or async over batches of 50), the median of REPEATS fresh runs. */
async function measure(step, { batched = false, setup } = {}) {
  const runs = [];
  for (let r = 0; r < REPEATS; r++) {
    const ds = deliveries();
    const ctx = setup ? await setup() : undefined;
    if (globalThis.gc) globalThis.gc();
    const before = process.cpuUsage();
    if (batched) {
      for (let i = 0; i < ds.length; i += BATCH) await Promise.all(ds.slice(i, i + BATCH).map((d) => step(d, ctx)));
    } else {
      for (const d of ds) step(d, ctx);
    }
    const used = process.cpuUsage(before);
    await ctx?.close?.();
    runs.push((used.user + used.system) / ds.length);
  }
  runs.sort((a, b) => a - b);
  return runs[runs.length >> 1];
}

const env = (path) => ({
  DATABASE_PATH: path,
  WEBHOOK_SECRETS: secret,
  ADMIN_TOKEN: "bench-admin-token-000",
  ALLOW_PRIVATE_IPS: "true",
  RESELLER_API_URL: "http://127.0.0.1:9/api/v1",
  RESELLER_API_TOKEN: "bench-reseller-token-000",
});
const config = loadConfig({ env: env(join(dir, "unused.db")) });
const silent = createLogger({ level: "warn", pretty: false });
let dbs = 0;
async function bridgeStore() {
  const store = await openStore({ ...config, DATABASE_PATH: join(dir, `bridge-${++dbs}.db`) }, { clock: systemClock, logger: silent, serving: true });
  return { store, accept: createIntake({ store, catalog: config.catalog, allowPrivateIps: true }), close: () => store.close() };
}
const source = billingSource([key]);
const rules = { catalog: config.catalog, allowPrivateIps: true, holdersOf: () => [] };

/** The store's part with the least a decision can write: the event (its payload the text as sent) and a register job. */
const minimalDecision = (d, withOrder) => (item) => ({
  write: true,
  result: { status: "accepted" },
  event: { type: item.event.type, serviceId: item.event.service.id, payload: d.text, outcome: null, detail: null },
  job: { kind: "register", payload: {}, serviceId: item.event.service.id, queueKey: item.queueKey },
  ...(withOrder ? { order: { insert: withOrder(item.event) } } : {}),
});
const orderRow = (e) => ({
  service_id: e.service.id,
  product_id: e.service.product_id,
  kind: "licence",
  type: "cpanel",
  bundle: null,
  variant: null,
  ip: e.service.ip,
  billing_cycle: e.service.billing_cycle,
  months: 1,
  status: "pending",
  customer_email: e.service.customer.email,
  customer_name: e.service.customer.name,
  paid_until: null,
  order_event_id: null,
});
const storeItem = (d, ip) => [{ webhookId: d.headers["webhook-id"], event: d.body, queueKey: `svc:${d.body.service.id}`, ip }];

/** A response stand-in for the request-line middleware: headers set, `finish` emitted by hand. */
class FakeResponse extends Writable {
  statusCode = 202;
  setHeader() {}
}
// pino's own destination (SonicBoom), as the service's logger writes to stdout, here to /dev/null.
const { default: pino } = await import("pino");
const infoLogger = createLogger({ level: "info", pretty: false, destination: pino.destination("/dev/null") });
const secrets = [secret, "bench-admin-token-000", "bench-reseller-token-000"];

const steps = [
  ["signature: baseline (hand-written Standard Webhooks)", (d) => verify(key, d.headers["webhook-id"], d.headers["webhook-timestamp"], d.headers["webhook-signature"], d.raw, Date.now())],
  ["signature: bridge (billingSource.authenticate, signature.ts verifyWebhook)", (d) => source.authenticate(d.req, d.raw, Date.now())],
  ["JSON.parse of the body (both)", (d) => JSON.parse(d.raw.toString("utf8"))],
  ["fields: baseline (by hand)", (d) => fieldProblems(d.body)],
  ["fields: bridge (billingEventSchema.safeParse, zod)", (d) => billingEventSchema.safeParse(d.body)],
  ["JSON.stringify of the parsed event (bridge's stored payload)", (d) => JSON.stringify(d.body)],
  ["business rules alone (rules.ts businessErrors, no holders)", (d) => businessErrors(billingEventSchema.parse(d.body), undefined, undefined, rules)],
  ["  (the same with the parse, to subtract)", (d) => billingEventSchema.parse(d.body)],
  [
    "intake logic without SQL (intake.ts: decide, rules, plan, order, jobOf, stringify)",
    async (d, ctx) => ctx.accept("billing", [{ webhookId: d.headers["webhook-id"], event: d.body }]),
    {
      batched: true,
      setup: async () => ({
        accept: createIntake({
          store: {
            events: {
              accept: async (_source, items, decide) => ({ stored: true, items: items.map((item) => ({ result: decide(item, { existing: undefined, unfinished: [], holders: [] }).result, eventId: "evt" })) }),
            },
          },
          catalog: config.catalog,
          allowPrivateIps: true,
        }),
      }),
    },
  ],
  [
    "write: baseline (event + job, group commit, fsync)",
    (d, w) => w.commit({ webhookId: d.headers["webhook-id"], type: d.body.type, serviceId: d.body.service.id, payload: d.text }),
    { batched: true, setup: async () => durableWriter(join(dir, `baseline-${++dbs}.db`)) },
  ],
  [
    "write: bridge store, event + job only (savepoint, dedupe select, service look-up)",
    (d, ctx) => ctx.store.events.accept("billing", storeItem(d, undefined), minimalDecision(d), () => true),
    { batched: true, setup: bridgeStore },
  ],
  [
    "write: bridge store, + holders look-up (one licence per service)",
    (d, ctx) => ctx.store.events.accept("billing", storeItem(d, d.body.service.ip), minimalDecision(d), () => true),
    { batched: true, setup: bridgeStore },
  ],
  [
    "write: bridge store, + the licence row (services insert, licence key)",
    (d, ctx) => ctx.store.events.accept("billing", storeItem(d, d.body.service.ip), minimalDecision(d, orderRow), () => true),
    { batched: true, setup: bridgeStore },
  ],
  [
    "write: bridge intake, whole (createIntake on the real store; body already validated)",
    (d, ctx) => ctx.accept("billing", [{ webhookId: d.headers["webhook-id"], event: billingEventSchema.parse(d.body) }]),
    { batched: true, setup: bridgeStore },
  ],
  ["  (its zod parse, to subtract)", (d) => billingEventSchema.parse(d.body)],
  [
    "request line middleware at LOG_LEVEL=warn (request-log.ts: X-Request-Id, randomUUID)",
    (d, mw) => mw(d.req, new FakeResponse(), () => {}),
    { setup: async () => requestLog(silent, secrets) },
  ],
  [
    "request line at LOG_LEVEL=info (+ the pino line on finish, to /dev/null)",
    (d, mw) => {
      const res = new FakeResponse();
      mw({ ...d.req, method: "POST", ip: "127.0.0.1", originalUrl: "/webhooks/billing" }, res, () => {});
      res.emit("finish");
    },
    { setup: async () => requestLog(infoLogger, secrets) },
  ],
  ["  of which loggablePath (loggable-path.ts)", () => loggablePath("/webhooks/billing", secrets)],
];

console.log(`CPU µs per delivery, median of ${REPEATS} runs of ${N} (${process.version}); writes ${BATCH} at a time\n`);
// BENCH_STEPS=<regex>: only the steps whose name matches (e.g. "write:" for the store's).
const only = process.env.BENCH_STEPS ? new RegExp(process.env.BENCH_STEPS) : undefined;
for (const [name, step, options] of steps) {
  if (only && !only.test(name)) continue;
  const us = await measure(step, options);
  console.log(`${us.toFixed(1).padStart(8)}  ${name}`);
}
rmSync(dir, { recursive: true, force: true });
