import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, resolve } from "node:path";
import { PERF_NODE_FLAGS } from "./perf-window.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The servers under measurement: they run with the node flags the service is deployed with. The
 * ingest bench's three (bare Express, the durable baseline, the bridge's route) all do, so their
 * ratios compare one node configuration.
 */
const SERVICE_SCRIPTS = new Set(["pipeline-bridge.mjs", "ingest-server.mjs"]);

/**
 * The node flags `npm start` gives the service (package.json), which the deployment kit gives it
 * too (test/deploy/kit.test.ts): the heap limit changes its peak memory (issue 25), so the bench
 * measures it with them. BENCH_SERVICE_NODE_FLAGS replaces them ("" for none, to compare).
 */
export function serviceNodeFlags(env: NodeJS.ProcessEnv = process.env): string[] {
  if (env.BENCH_SERVICE_NODE_FLAGS !== undefined) return env.BENCH_SERVICE_NODE_FLAGS.split(/\s+/).filter(Boolean);
  const pkg = JSON.parse(readFileSync(resolve(ROOT, "package.json"), "utf8")) as { scripts: { start: string } };
  const m = /^exec node((?: --\S+)*) bin\/license-bridge\.mjs serve$/.exec(pkg.scripts.start);
  if (!m) throw new Error(`package.json: the start script is not "exec node [--flag ...] bin/license-bridge.mjs serve": ${pkg.scripts.start}`);
  return m[1]!.split(" ").filter(Boolean);
}

/**
 * Starts `bench/<script>` in its own process (a `.ts` under tsx, a `.mjs` with plain node, as
 * production runs) and waits for its "READY <json>" line.
 * The child has an IPC channel: `ask` sends it a message and resolves with its next reply.
 */
export async function startChild<T>(
  script: string,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<{ info: T; child: ChildProcess; ask<R>(message: object): Promise<R>; stop(): Promise<void> }> {
  // BENCH_CPU_PROF=dir profiles every child (a .cpuprofile per process in dir); with
  // BENCH_CPU_PROF_ONLY=script[:arg], only the children of that script (and first argument).
  const only = process.env.BENCH_CPU_PROF_ONLY?.split(":");
  const profiled = !!process.env.BENCH_CPU_PROF && (!only || (only[0] === script && (only[1] === undefined || only[1] === args[0])));
  const profile = profiled ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const loader = script.endsWith(".ts") ? ["--import", "tsx"] : [];
  // BENCH_PERF_DIR: named JavaScript frames for `perf` (perf-window.ts).
  const perf = process.env.BENCH_PERF_DIR ? PERF_NODE_FLAGS : [];
  const service = SERVICE_SCRIPTS.has(script) ? serviceNodeFlags() : [];
  const child = spawn(process.execPath, [...service, ...profile, ...perf, ...loader, resolve(ROOT, "bench", script), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  const info = await new Promise<T>((ok, fail) => {
    let buf = "";
    const onData = (d: Buffer) => {
      buf += d.toString();
      const m = /^READY (.*)$/m.exec(buf);
      if (!m) return;
      // What the child writes after (log lines at LOG_LEVEL=info) is read and dropped, not kept.
      child.stdout!.off("data", onData).resume();
      ok(JSON.parse(m[1]!) as T);
    };
    child.stdout!.on("data", onData);
    child.once("exit", (code) => fail(new Error(`${script} exited with ${code} before it was ready`)));
  });
  return {
    info,
    child,
    ask: <R>(message: object) =>
      new Promise<R>((ok) => {
        child.once("message", (reply) => ok(reply as R));
        child.send(message);
      }),
    stop: () =>
      new Promise<void>((r) => {
        if (child.exitCode !== null) return r();
        child.once("exit", () => r());
        child.kill("SIGTERM");
      }),
  };
}
