import fs from "node:fs";
import path from "node:path";
import { z } from "zod";

/**
 * Where a sandbox keeps its state across restarts (`statePath`): one JSON file, written whole
 * after each change, read and checked against the sandbox's schema at start. Every sandbox (the
 * reseller's, Manage2's, CLN's) keeps its own this way.
 */

/** Writes the state; nothing without a file. Temp file + rename, so a crash mid-write never leaves a half-written state behind. */
export function saveStateFile(file: string | undefined, data: unknown): void {
  if (file === undefined) return;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify(data, null, 2));
  fs.renameSync(temp, file);
}

/**
 * The state kept in `file`, or undefined when there is none yet. A file that is not JSON, or
 * not what `schema` takes, stops the sandbox with a line naming it: `<owner> state file <file>
 * is not valid JSON` or `… is not <what>`.
 */
export function loadStateFile<S extends z.ZodType>(file: string | undefined, schema: S, owner: string, what: string): z.output<S> | undefined {
  if (file === undefined || !fs.existsSync(file)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (error) {
    throw new Error(`${owner} state file ${file} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new Error(`${owner} state file ${file} is not ${what}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
