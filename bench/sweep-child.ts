// Runs one renewal sweep over a prepared database in a fresh process, so its peak RSS is the
// sweep's own (plus the runtime), not the data generation's.
import { readFileSync } from "node:fs";
import { systemClock } from "../src/jobs/clock.js";
import { JobQueue } from "../src/jobs/queue.js";
import { createSweep } from "../src/renewals/sweep.js";
import { openDatabase } from "../src/store/database.js";

const db = openDatabase(process.argv[2]!);
const sweep = createSweep(db, new JobQueue(db, systemClock), systemClock, 3);
const started = performance.now();
const result = sweep.sweep();
const ms = performance.now() - started;
const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
const rssMb = hwm ? Number(hwm[1]) / 1024 : process.memoryUsage().rss / 2 ** 20;
console.log(`READY ${JSON.stringify({ ms, rssMb, queued: result.queued.length })}`);
