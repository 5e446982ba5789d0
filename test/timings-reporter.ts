import { relative } from "node:path";
import type { Reporter, TestModule, Vitest } from "vitest/node";

/** How many of the slowest files the summary names. (Default: 15, or LB_TIMINGS_TOP) */
const TOP = Number(process.env.LB_TIMINGS_TOP ?? 15);

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

interface FileTime {
  project: string;
  file: string;
  tests: number;
  /** Its tests and hooks. */
  runMs: number;
  /** Importing it and what it imports (vitest's "import"), its setup files, and its environment. */
  loadMs: number;
}

/**
 * Prints, after the run, where its time went: per project (files, tests, time in tests and hooks,
 * time loading modules) and the slowest files, so the next slow suite shows itself. Runs beside
 * the default reporter (vitest.config.ts; `.ci/run` names it too, since reporters given on the
 * command line replace the config's).
 */
export default class TimingsReporter implements Reporter {
  private vitest: Vitest | undefined;
  private startedAt = Date.now();

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
  }

  onTestRunStart(): void {
    this.startedAt = Date.now();
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    if (testModules.length === 0) return;
    const root = this.vitest?.config.root ?? process.cwd();
    const files: FileTime[] = testModules.map((m) => {
      const d = m.diagnostic();
      return {
        project: m.project.name || "(default)",
        file: relative(root, m.moduleId),
        tests: [...m.children.allTests()].length,
        runMs: d.duration,
        loadMs: d.collectDuration + d.setupDuration + d.prepareDuration + d.environmentSetupDuration,
      };
    });
    const lines: string[] = ["", `Timings (wall ${seconds(Date.now() - this.startedAt)}; per file: tests and hooks, then loading)`];
    const projects = [...new Set(files.map((f) => f.project))];
    for (const project of projects) {
      const of = files.filter((f) => f.project === project);
      const sum = (pick: (f: FileTime) => number) => of.reduce((n, f) => n + pick(f), 0);
      lines.push(
        `  ${project.padEnd(10)} ${String(of.length).padStart(4)} files ${String(sum((f) => f.tests)).padStart(5)} tests   ` +
          `${seconds(sum((f) => f.runMs)).padStart(9)} in tests   ${seconds(sum((f) => f.loadMs)).padStart(9)} loading`,
      );
    }
    lines.push(`  slowest ${Math.min(TOP, files.length)} files:`);
    for (const f of [...files].sort((a, b) => b.runMs + b.loadMs - (a.runMs + a.loadMs)).slice(0, TOP)) {
      lines.push(`  ${seconds(f.runMs).padStart(9)} ${seconds(f.loadMs).padStart(8)}  ${f.project.padEnd(9)} ${f.file} (${f.tests} tests)`);
    }
    const log = this.vitest?.logger;
    for (const line of lines) {
      if (log) log.log(line);
      else console.log(line);
    }
  }
}
