import type { Command } from "commander";
import { linesOn, type Output } from "./output.js";

/** A stream the CLI writes to; whether it is a terminal (its width, its colours) is read from it, as from process.stdout. */
export type CliWritable = NodeJS.WritableStream & { readonly isTTY?: boolean; readonly columns?: number; hasColors?(): boolean };

/**
 * What one run of the CLI reads and writes. The bin passes the process's own; a test runs the CLI
 * in its own process with an environment, a directory and streams of its choosing, and the run
 * reads and changes nothing of the test process's (its environment, its output, its exit code).
 */
export interface CliIo {
  /** The configuration is read from it, as the service reads it (and `--password-env` names a variable of it). */
  env: NodeJS.ProcessEnv;
  /** Relative settings and file arguments resolve against it. */
  cwd: string;
  stdout: CliWritable;
  stderr: CliWritable;
  /** Read only by a command that takes its input there (`operators hash`). */
  stdin: AsyncIterable<Buffer | string>;
}

/** The process's own, for the bin. */
export function processIo(): CliIo {
  return {
    env: process.env,
    cwd: process.cwd(),
    stdout: process.stdout,
    stderr: process.stderr,
    // Looked up when read: touching process.stdin opens descriptor 0, which one command alone wants.
    get stdin() {
      return process.stdin;
    },
  };
}

/** What a command module is given when it defines its command: the run's io, its output, and where to leave what it opens. */
export interface CliContext {
  readonly io: CliIo;
  /** The command's output on the run's streams: tables, or JSON with --json (before or after the command). */
  output(cmd: Command): Output;
  /**
   * Closes what a command opened (a reseller client's connections) when the run ends, however it
   * ends, so a run inside a test's process leaves no socket or timer behind for the next.
   */
  atEnd(close: () => Promise<void> | void): void;
}

/** A run's context, and `close()` for its end: everything left with `atEnd`, last first; one that fails does not keep the others open. */
export function cliContext(io: CliIo): CliContext & { close(): Promise<void> } {
  const closers: (() => Promise<void> | void)[] = [];
  return {
    io,
    output: (cmd) => ({ json: Boolean(cmd.optsWithGlobals().json), ...linesOn(io) }),
    atEnd: (close) => void closers.push(close),
    async close() {
      for (const close of closers.splice(0).reverse()) await Promise.resolve().then(close).catch(() => {});
    },
  };
}
