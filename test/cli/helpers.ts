import { execFile } from "node:child_process";
import { resolve } from "node:path";

const BIN = resolve(import.meta.dirname, "../../bin/license-bridge.mjs");

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (for --json runs). */
  json<T = Record<string, unknown>>(): T;
}

/**
 * Runs the real CLI in a child process (`node bin/license-bridge.mjs ...`) with exactly `env`
 * on top of PATH and HOME, the way an operator runs it next to the service.
 */
export function runCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env }, timeout: 20_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        done({ code, stdout, stderr, json: <T>() => JSON.parse(stdout) as T });
      },
    );
  });
}
