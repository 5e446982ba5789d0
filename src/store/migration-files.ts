import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** migrations/<dialect>/NNN_name.sql: the same numbers and names in each dialect. */
export const MIGRATIONS_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../migrations");

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

/** Files named `NNN_name.sql` in `dir`, in number order. */
export function readMigrationFiles(dir: string): Migration[] {
  return readdirSync(dir)
    .map((file) => /^(\d+)_([\w-]+)\.sql$/.exec(file))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ id: Number(m[1]), name: m[2]!, sql: readFileSync(join(dir, m[0]), "utf8") }))
    .sort((a, b) => a.id - b.id);
}
