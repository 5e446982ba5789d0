// Runs one renewal sweep over a prepared database in a fresh process, so its peak RSS is the
// sweep's own (plus the runtime), not the data generation's.
import { readFileSync } from "node:fs";
import { systemClock } from "../src/clock.js";
import { createSweep } from "../src/renewals/sweep.js";
import { openSqliteStore } from "../src/store/sqlite/store.js";

const store = openSqliteStore(process.argv[2]!, { clock: systemClock });
const sweep = createSweep(store, 3);
const started = performance.now();
const result = await sweep.sweep();
const ms = performance.now() - started;
const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
const rssMb = hwm ? Number(hwm[1]) / 1024 : process.memoryUsage().rss / 2 ** 20;
console.log(`READY ${JSON.stringify({ ms, rssMb, queued: result.queued.length })}`);
