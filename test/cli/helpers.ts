import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import { runCli as runCliIn, type CliIo } from "../../src/cli/main.js";

const ROOT = resolve(import.meta.dirname, "../..");
const BIN = resolve(ROOT, "bin/license-bridge.mjs");

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (for --json runs). */
  json<T = Record<string, unknown>>(): T;
}

export interface CliOptions {
  /** What the command reads on standard input (default: nothing). */
  stdin?: string;
  /** Its working directory (default: the project's root, where the tests run). */
  cwd?: string;
}

/** The environment a run sees: exactly `env` on top of PATH and HOME, as an operator's shell gives them. */
const runEnv = (env: Record<string, string>) => ({ PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env });

/** A stream that keeps the text written to it. */
function capture(): { stream: Writable; text: () => string } {
  let text = "";
  const stream = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

const ran = (code: number, stdout: string, stderr: string): CliRun => ({ code, stdout, stderr, json: <T>() => JSON.parse(stdout) as T });

/**
 * Runs the CLI in this process, `license-bridge <args>` with exactly `env` on top of PATH and
 * HOME: the same code the bin runs, given its own environment, directory and streams, so nothing
 * of this process's is read or changed, and no node starts per call.
 */
export async function runCli(args: string[], env: Record<string, string>, options: CliOptions = {}): Promise<CliRun> {
  const stdout = capture();
  const stderr = capture();
  const io: CliIo = {
    env: runEnv(env),
    cwd: options.cwd ?? ROOT,
    stdout: stdout.stream,
    stderr: stderr.stream,
    stdin: Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]),
  };
  const code = await runCliIn(["node", "license-bridge", ...args], io);
  return ran(code, stdout.text(), stderr.text());
}

/**
 * Runs the real bin in a child process (`node bin/license-bridge.mjs ...`), for the few tests of
 * the bin itself: what `npx license-bridge` does, exit code included.
 */
export function spawnCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { env: runEnv(env), cwd: ROOT, timeout: 20_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      done(ran(code, stdout, stderr));
    });
  });
}
