// The intake's store write alone, profiled: BENCH_DELIVERIES signed service.created deliveries
// through the route's steps after the HTTP server (signature, JSON, schema, createIntake on a
// real SQLite store, 50 at a time through the group commit), under V8's sampling profiler, on
// the compiled dist/ (`npm run build` first): `node bench/intake-profile.mjs <dir>` writes
// <dir>/intake-<pid>.cpuprofile (read it with `npx tsx bench/cpu-profile.ts … --per N`) and
// prints the CPU µs per delivery. No HTTP, so the profile is the intake's own (issue 24).
// Alternate it with BENCH_DIST=<an earlier build's dist> for a before and after on a busy machine.
import { Buffer } from "node:buffer";
import { createHmac } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { durableWriter, fieldProblems, verify } from "./ingest-durable-baseline.mjs";
import { profileWindow } from "./profile-window.mjs";

// BENCH_DIST: another build's dist/ to measure instead (an earlier commit's, for before and after).
const dist = process.env.BENCH_DIST ? new URL(`file://${process.env.BENCH_DIST.replace(/\/?$/, "/")}`) : new URL("../dist/", import.meta.url);
const load = (path) => import(new URL(path, dist).href);
const [{ loadConfig }, { openStore }, { systemClock }, { createLogger }, { billingSource }, { createIntake }, { secretKey }] = await Promise.all(
  ["config/load.js", "store/open.js", "clock.js", "log/logger.js", "webhooks/billing-source.js", "intake/intake.js", "webhooks/signature.js"].map(load),
);

const N = Number(process.env.BENCH_DELIVERIES ?? 20_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 50);
const out = process.argv[2];
const secret = `whsec_${Buffer.from("bench-intake-profile-secret-00").toString("base64")}`;
const key = secretKey(secret);
const dir = mkdtempSync(join(tmpdir(), "lb-bench-intake-"));
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
const store = await openStore(config, { clock: systemClock, logger: createLogger({ level: "warn", pretty: false }), serving: true });
const intake = createIntake({ store, catalog: config.catalog, allowPrivateIps: true });
const source = billingSource([key]);

let round = 0;
function deliveries(count) {
  round++;
  const ts = String(Math.floor(Date.now() / 1000));
  return Array.from({ length: count }, (_, k) => {
    const i = round * 1_000_000 + k;
    const text = JSON.stringify({
      type: "service.created",
      service: { id: `bench-${i}`, product_id: "12", billing_cycle: "monthly", ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, customer: { email: `c${i}@example.com`, name: "Bench Customer" } },
    });
    const id = `msg_${i}`;
    const headers = { "content-type": "application/json", "webhook-id": id, "webhook-timestamp": ts, "webhook-signature": `v1,${createHmac("sha256", key).update(`${id}.${ts}.`).update(text).digest("base64")}` };
    return { raw: Buffer.from(text), req: { headers, header: (name) => headers[name.toLowerCase()] } };
  });
}

/** What the route does for one delivery after the body is read. */
async function deliver(d) {
  if (source.authenticate(d.req, d.raw, Date.now())) throw new Error("signature refused");
  const t = await source.translate(JSON.parse(d.raw.toString("utf8")), { req: d.req, raw: d.raw, catalog: config.catalog, nowMs: Date.now() });
  const valid = t.events.map((te) => ({ webhookId: te.webhookId, event: source.schema.parse(te.event) }));
  const [r] = await intake(source.source, valid);
  if (r.status !== "accepted") throw new Error(`not accepted: ${JSON.stringify(r)}`);
}

// BENCH_INTAKE=baseline: the durable baseline's steps instead (ingest-durable-baseline.mjs), for the difference.
const baseline = process.env.BENCH_INTAKE === "baseline" ? durableWriter(join(dir, "baseline.db")) : undefined;
async function deliverBaseline(d) {
  const h = d.req.headers;
  if (verify(key, h["webhook-id"], h["webhook-timestamp"], h["webhook-signature"], d.raw, Date.now())) throw new Error("signature refused");
  const text = d.raw.toString("utf8");
  const event = JSON.parse(text);
  if (Object.keys(fieldProblems(event)).length > 0) throw new Error("fields refused");
  const r = await baseline.commit({ webhookId: h["webhook-id"], type: event.type, serviceId: String(event.service.id).trim(), payload: text });
  if (r.duplicate) throw new Error("duplicate");
}

async function run(ds) {
  const one = baseline ? deliverBaseline : deliver;
  for (let i = 0; i < ds.length; i += BATCH) await Promise.all(ds.slice(i, i + BATCH).map(one));
}

await run(deliveries(Math.min(N, 5000))); // warm-up: JIT, statement caches
const ds = deliveries(N);
if (out) await profileWindow({ profile: "start" }, "intake");
const before = process.cpuUsage();
await run(ds);
const used = process.cpuUsage(before);
const path = out ? await profileWindow({ profile: "stop", dir: out }, "intake") : undefined;
console.log(`${baseline ? "baseline: " : "intake: "}${((used.user + used.system) / N).toFixed(1)} µs CPU per delivery (${N} deliveries, ${BATCH} at a time; user ${(used.user / N).toFixed(1)}, system ${(used.system / N).toFixed(1)})${path ? `; profile ${path}` : ""}`);
await store.close();
await baseline?.close();
rmSync(dir, { recursive: true, force: true });
