// The reseller sandbox in its own process, so its work does not share the bridge's event loop.
// BENCH_SANDBOX_STATE: a state file to start from (bench/scale.ts seeds 100,000 licences in one).
import { createSandbox } from "../src/sandbox/app.js";

const latencyMs = Number(process.env.BENCH_LATENCY_MS ?? 50);
const sandbox = createSandbox({ balance: 1e9, faults: { latencyMs }, statePath: process.env.BENCH_SANDBOX_STATE || undefined });
const running = await sandbox.listen(0, "127.0.0.1");
console.log(`READY ${JSON.stringify({ apiUrl: running.apiUrl, legacyUrl: running.legacyUrl, url: running.url })}`);
process.on("SIGTERM", () => void running.close().then(() => process.exit(0)));
