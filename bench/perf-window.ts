// Linux `perf` over a server's measured window, for where its CPU goes when a V8 profile cannot
// say: `perf record -e cpu-clock` samples only when a thread of the process is on a CPU (a V8
// profile samples wall time, so a thread waiting for a core, which is common on two shared
// vCPUs, is charged to whatever it was running), covers every thread (the thread pool's fsyncs
// and file writes too) and the kernel's part of each system call. With BENCH_PERF_DIR=dir the
// benches start their servers with `--perf-basic-prof-only-functions
// --interpreted-frames-native-stack` (child.ts), so JavaScript frames have names, and record
// `<dir>/<name>-<pid>.perf.data`; bench/perf-summary.ts reads it.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";

export const PERF_NODE_FLAGS = ["--perf-basic-prof-only-functions", "--interpreted-frames-native-stack"];

/** Starts recording `pid` (with call chains) into `dir`; `stop()` ends it and resolves with the file. */
export function perfWindow(dir: string, name: string, pid: number): { stop(): Promise<string> } {
  const file = join(dir, `${name}-${pid}.perf.data`);
  const frequency = process.env.BENCH_PERF_FREQUENCY ?? "1999";
  const perf: ChildProcess = spawn("perf", ["record", "-q", "-e", "cpu-clock", "-F", frequency, "-g", "-p", String(pid), "-o", file], { stdio: ["ignore", "ignore", "inherit"] });
  const exited = new Promise<void>((ok) => perf.once("exit", () => ok()));
  return {
    async stop() {
      perf.kill("SIGINT");
      await exited;
      return file;
    },
  };
}
