import { readFileSync } from "node:fs";
import { z } from "zod";
import { ADMIN_TOKEN_ACTOR, ROLES, type Role } from "../vocabulary/roles.js";

/**
 * OPERATORS_FILE: the people who use the admin API, the CLI and the console, each with a name
 * (what the audit trail records), a role and the SHA-256 of their bearer token. The token itself
 * is never stored: the file holds its hash only, so the file may be read by more than the service.
 *
 *   [{"name": "alice", "role": "admin", "token_sha256": "9f86d081884c7d65..."}]
 *
 * Make a token and its hash with `license-bridge operators new <name> --role <role>` (or
 * `printf %s "$TOKEN" | sha256sum`).
 */
export interface OperatorEntry {
  name: string;
  role: Role;
  /** SHA-256 of the token, 64 lower-case hex digits. */
  token_sha256: string;
}

/** Names as the audit trail and the CLI's `--as` take them: no spaces, no colon (the CLI's own `cli:<user>` actor has one). */
export const OPERATOR_NAME_RULE = "must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit";

export const operatorSchema = z.strictObject({
  name: z
    .string({ error: "is missing (a name for the audit trail, e.g. \"alice\")" })
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { error: OPERATOR_NAME_RULE })
    .refine((n) => n !== ADMIN_TOKEN_ACTOR, { error: `"${ADMIN_TOKEN_ACTOR}" is ADMIN_TOKEN's name; choose another` }),
  role: z.enum(ROLES, { error: `must be ${ROLES.map((r) => `"${r}"`).join(", ")}` }),
  token_sha256: z
    .string({ error: "is missing (the SHA-256 of the operator's token)" })
    .regex(/^[0-9A-Fa-f]{64}$/, { error: "must be the SHA-256 of the token as 64 hex digits (printf %s \"$TOKEN\" | sha256sum)" })
    .transform((h) => h.toLowerCase()),
});

export const operatorsFileSchema = z.array(operatorSchema, { error: 'must be a JSON list of operators: [{"name", "role", "token_sha256"}, ...]' });

export type OperatorsLoadResult = { ok: true; operators: OperatorEntry[] } | { ok: false; problems: string[] };

/** How an entry is named in a problem: its place in the list, and its name when it has one. */
function entryLabel(list: unknown, index: number): string {
  const name = Array.isArray(list) ? (list[index] as { name?: unknown } | null)?.name : undefined;
  return `entry ${index + 1}${typeof name === "string" && name.length <= 64 ? ` (${JSON.stringify(name)})` : ""}`;
}

/**
 * Reads and validates an operators file; each problem is one line naming the entry and the field
 * ("entry 2 (\"bob\"), role: must be ..."). Names and tokens must be unique. (That no operator
 * holds an ADMIN_TOKEN is checked by loadConfig, once it knows them.)
 */
export function loadOperators(path: string): OperatorsLoadResult {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    return { ok: false, problems: [`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`] };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    // The parser's own words name the position; the file holds only hashes, but no need to quote it.
    const position = /at position (\d+)/.exec((err as Error).message)?.[1];
    return { ok: false, problems: [`${path} is not valid JSON${position ? ` (at position ${position})` : ""}`] };
  }
  const parsed = operatorsFileSchema.safeParse(json);
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map((i) => {
        const [index, ...field] = i.path;
        if (typeof index !== "number") return `${path}: ${i.message}`;
        // A key the schema does not know: zod names it in the message; the entry is the path.
        const fieldName = field.length ? field.join(".") : i.code === "unrecognized_keys" ? (i.keys ?? []).join(", ") : "(the entry)";
        const message = i.code === "unrecognized_keys" ? 'is not a field of an operator (they are "name", "role", "token_sha256")' : i.message;
        return `${path}: ${entryLabel(json, index)}, ${fieldName}: ${message}`;
      }),
    };
  }
  const problems: string[] = [];
  const byName = new Map<string, number>();
  const byToken = new Map<string, number>();
  parsed.data.forEach((op, i) => {
    const label = entryLabel(json, i);
    const sameName = byName.get(op.name.toLowerCase());
    if (sameName !== undefined) problems.push(`${path}: ${label}, name: is entry ${sameName + 1}'s too; each operator needs a name of their own`);
    else byName.set(op.name.toLowerCase(), i);
    const sameToken = byToken.get(op.token_sha256);
    if (sameToken !== undefined) problems.push(`${path}: ${label}, token_sha256: is entry ${sameToken + 1}'s too; give each operator a token of their own`);
    else byToken.set(op.token_sha256, i);
  });
  return problems.length ? { ok: false, problems } : { ok: true, operators: parsed.data };
}
