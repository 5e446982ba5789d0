import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Role } from "../../src/vocabulary/roles.js";

/** An operator as a test names them: the token in clear, which OPERATORS_FILE keeps only as its SHA-256. */
export interface TestOperator {
  name: string;
  role: Role;
  token: string;
}

const entryOf = (o: TestOperator) => ({ name: o.name, role: o.role, token_sha256: createHash("sha256").update(o.token).digest("hex") });

/** Writes `operators` to `file` as OPERATORS_FILE lists them (a reload test rewrites it). */
export function writeOperators(file: string, operators: readonly TestOperator[]): void {
  writeFileSync(file, JSON.stringify(operators.map(entryOf)));
}

/** A new OPERATORS_FILE in a temp folder of its own, listing `operators`; returns its path. */
export function operatorsFile(operators: readonly TestOperator[]): string {
  const file = join(mkdtempSync(join(tmpdir(), "lb-operators-")), "operators.json");
  writeOperators(file, operators);
  return file;
}
