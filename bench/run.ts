// `npm run bench`: every benchmark, one after another, then all figures as `name: value` lines.
import { runCliStartup } from "./cli-startup.js";
import { runIngest } from "./ingest.js";
import { runPipeline } from "./pipeline.js";
import { runSweep } from "./sweep.js";
import type { Figure } from "./report.js";

const all: Figure[] = [];
for (const run of [runIngest, runPipeline, runSweep, runCliStartup]) all.push(...(await run()));
const missed = all.filter((f) => f.met === false);
console.log(`\n${all.length} figures, ${missed.length ? `targets NOT met: ${missed.map((f) => f.name).join(", ")}` : "every target met"}`);
