// CLI start-up: wall time of `license-bridge --help` and `license-bridge jobs list` (the compiled
// CLI, as `npx license-bridge` runs it) against a bare `node -e 0`, in alternating rounds of the
// same script so all share the machine's noise. For comparison, --help of the same code run from
// src/ under tsx, as the bin did before dist/.
//
// The children get this process's environment, as an operator's shell would give them. Some of it
// costs every node process the same fixed time (NODE_EXTRA_CA_CERTS: reading a CA bundle, about
// 60 ms here), which flatters the ratios; the *_over_node_ms figures (time beyond a bare node
// start) do not depend on it.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { median, report, type Figure } from "./report.js";

const ROOT = resolve(import.meta.dirname, "..");
const ROUNDS = Number(process.env.BENCH_ROUNDS_CLI ?? 20);
const TARGET_RATIO = 3;

interface Case {
  name: string;
  args: string[];
}

const BIN = resolve(ROOT, "bin/license-bridge.mjs");
const CASES: Case[] = [
  { name: "node", args: ["-e", "0"] },
  { name: "help", args: [BIN, "--help"] },
  { name: "jobs_list", args: [BIN, "jobs", "list"] },
  {
    name: "help_tsx",
    args: ["--import", "tsx", "--input-type=module", "-e", "const { runCli } = await import('./src/cli/main.ts'); process.exitCode = await runCli(process.argv);", "cli", "--help"],
  },
];

function run(args: string[], env: NodeJS.ProcessEnv): number {
  const t = performance.now();
  const res = spawnSync(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
  const ms = performance.now() - t;
  if (res.status !== 0) throw new Error(`node ${args.join(" ")} exited ${res.status}: ${res.stderr}`);
  return ms;
}

export async function runCliStartup(): Promise<Figure[]> {
  // Measure the code as it is: bring dist/ up to date first (nothing to do when it is).
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const build = spawnSync(process.execPath, [tsc, "-b", "tsconfig.build.json"], { cwd: ROOT, encoding: "utf8" });
  if (build.status !== 0) throw new Error(`tsc -b tsconfig.build.json failed:\n${build.stdout}${build.stderr}`);
  const bundle = spawnSync(process.execPath, ["scripts/bundle-cli.mjs", "--when-stale"], { cwd: ROOT, encoding: "utf8" });
  if (bundle.status !== 0) throw new Error(`scripts/bundle-cli.mjs failed:\n${bundle.stdout}${bundle.stderr}`);

  const dir = mkdtempSync(join(tmpdir(), "lb-bench-cli-"));
  try {
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: "silent", DATABASE_PATH: join(dir, "license-bridge.db") };
    delete env.NODE_OPTIONS; // not the `--import tsx` this script may run under
    for (const key of Object.keys(env)) if (key.startsWith("RESELLER_") || key === "CONFIG_FILE") delete env[key];
    run([BIN, "migrate"], env);
    const times = new Map<string, number[]>(CASES.map((c) => [c.name, []]));
    for (const c of CASES) run(c.args, env); // warm the file cache
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate the order each round so no case always runs first or last.
      for (let i = 0; i < CASES.length; i++) {
        const c = CASES[(round + i) % CASES.length]!;
        times.get(c.name)!.push(run(c.args, env));
      }
    }
    const ms = (name: string) => median(times.get(name)!);
    const min = (name: string) => Math.min(...times.get(name)!);
    const node = ms("node");
    const figures: Figure[] = [
      { name: "cli_node_e0_ms", value: node, unit: "ms" },
      { name: "cli_help_ms", value: ms("help"), unit: "ms" },
      { name: "cli_jobs_list_ms", value: ms("jobs_list"), unit: "ms" },
      { name: "cli_help_tsx_ms", value: ms("help_tsx"), unit: "ms" },
      { name: "cli_help_over_node_ms", value: ms("help") - node, unit: "ms" },
      { name: "cli_jobs_list_over_node_ms", value: ms("jobs_list") - node, unit: "ms" },
      { name: "cli_help_vs_node", value: ms("help") / node, target: `<= ${TARGET_RATIO}`, met: ms("help") / node <= TARGET_RATIO },
      { name: "cli_jobs_list_vs_node", value: ms("jobs_list") / node, target: `<= ${TARGET_RATIO}`, met: ms("jobs_list") / node <= TARGET_RATIO },
      { name: "cli_help_tsx_vs_node", value: ms("help_tsx") / node },
      { name: "cli_help_vs_node_fastest", value: min("help") / min("node") },
      { name: "cli_jobs_list_vs_node_fastest", value: min("jobs_list") / min("node") },
    ];
    report(`CLI start-up (median of ${ROUNDS} alternating rounds; *_fastest: fastest run against fastest run)`, figures);
    if (process.env.NODE_EXTRA_CA_CERTS) console.log("(NODE_EXTRA_CA_CERTS is set: every node start, the baseline's too, reads that CA bundle)");
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runCliStartup();
