import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { z } from "zod";

/**
 * A sandbox-mode service runs its sandboxes in-process on ports of their own and leaves where
 * each listens in a small JSON file under the data directory (`sandbox-upstream.json`,
 * `sandbox-manage2.json`, `sandbox-cln.json`), so the CLI beside it talks to the same ones.
 */

/** Writes the pointer; the function returned removes it (at the service's close). */
export function leaveSandboxPointer(path: string, content: object): () => void {
  writeFileSync(path, JSON.stringify({ ...content, pid: process.pid }) + "\n");
  return () => rmSync(path, { force: true });
}

/** The pointer as `schema` reads it; "missing" when no service left one, "invalid" when it is not what a service writes. */
export function readSandboxPointer<S extends z.ZodType>(path: string, schema: S): z.output<S> | "missing" | "invalid" {
  if (!existsSync(path)) return "missing";
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    raw = undefined;
  }
  const parsed = schema.safeParse(raw);
  return parsed.success ? parsed.data : "invalid";
}
