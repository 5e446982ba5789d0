import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/load.js";
import { RESELLER_CATALOGUE } from "../helpers/bridge.js";

// OPERATORS_FILE (issue 26): named operators with a role and only the hash of their token,
// validated at start with one line per problem naming the file, the entry and the field.

const SECRET = "whsec_" + Buffer.from("0123456789abcdef0123").toString("base64");
const ADMIN = "admin-token-0123456789";
const live = { RESELLER_API_URL: "https://reseller.example/api/v1", RESELLER_API_TOKEN: "tok_live_123", WEBHOOK_SECRETS: SECRET, ADMIN_TOKEN: ADMIN, PRODUCTS_FILE: RESELLER_CATALOGUE };
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

/** Loads a live configuration with `operators` (a value to write as JSON, or raw text) as its OPERATORS_FILE. */
function load(operators: unknown) {
  const dir = mkdtempSync(join(tmpdir(), "lb-operators-"));
  const file = join(dir, "operators.json");
  writeFileSync(file, typeof operators === "string" ? operators : JSON.stringify(operators));
  return { file, load: () => loadConfig({ env: { ...live, DATABASE_PATH: join(dir, "db.sqlite"), OPERATORS_FILE: file }, cwd: process.cwd() }) };
}

function problemsOf(operators: unknown): { file: string; lines: string[] } {
  const { file, load: run } = load(operators);
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigError) return { file, lines: err.lines };
    throw err;
  }
  return { file, lines: [] };
}

describe("OPERATORS_FILE", () => {
  it("loads names, roles and token hashes; no token in clear anywhere in the configuration", () => {
    const { load: run } = load([
      { name: "alice", role: "admin", token_sha256: sha256("alice-token-0123456789") },
      { name: "bob", role: "viewer", token_sha256: sha256("bob-token-0123456789").toUpperCase() },
    ]);
    const config = run();
    expect(config.operators).toEqual([
      { name: "alice", role: "admin", token_sha256: sha256("alice-token-0123456789") },
      { name: "bob", role: "viewer", token_sha256: sha256("bob-token-0123456789") },
    ]);
    expect(JSON.stringify(config)).not.toContain("alice-token-0123456789");
  });

  it("a bad entry stops start-up with a line naming the file, the entry and the field", () => {
    const { file, lines } = problemsOf([
      { name: "alice", role: "root", token_sha256: sha256("a-token-0123456789") },
      { name: "bob", role: "viewer", token_sha256: "abc" },
      { name: "carol", role: "operator", token_sha256: sha256("c-token-0123456789"), token: "c-token-0123456789" },
    ]);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^OPERATORS_FILE: .*entry 1 \("alice"\), role: must be "viewer", "operator", "admin"/);
    expect(lines[1]).toMatch(/entry 2 \("bob"\), token_sha256: must be the SHA-256/);
    expect(lines[2]).toMatch(/entry 3 \("carol"\), token: is not a field of an operator/);
    for (const l of lines) expect(l).toContain(file);
  });

  it("refuses a file that is not JSON, two operators with one name or one token, and a hash of ADMIN_TOKEN", () => {
    expect(problemsOf("[{").lines).toEqual([expect.stringMatching(/^OPERATORS_FILE: .*operators\.json is not valid JSON/)]);
    const same = sha256("shared-token-0123456789");
    expect(
      problemsOf([
        { name: "alice", role: "admin", token_sha256: same },
        { name: "Alice", role: "viewer", token_sha256: same },
      ]).lines,
    ).toEqual([expect.stringMatching(/entry 2 \("Alice"\), name: is entry 1's too/), expect.stringMatching(/entry 2 \("Alice"\), token_sha256: is entry 1's too/)]);
    expect(problemsOf([{ name: "eve", role: "viewer", token_sha256: sha256(ADMIN) }]).lines).toEqual([
      expect.stringMatching(/^OPERATORS_FILE: operator "eve", token_sha256: is the hash of an ADMIN_TOKEN/),
    ]);
    expect(problemsOf([{ name: "admin", role: "admin", token_sha256: sha256("x-token-0123456789") }]).lines).toEqual([
      expect.stringMatching(/entry 1 \("admin"\), name: "admin" is ADMIN_TOKEN's name/),
    ]);
  });

  it("a file that cannot be read is a problem naming it", () => {
    const dir = mkdtempSync(join(tmpdir(), "lb-operators-"));
    const missing = join(dir, "nope.json");
    let lines: string[] = [];
    try {
      loadConfig({ env: { ...live, DATABASE_PATH: join(dir, "db.sqlite"), OPERATORS_FILE: missing }, cwd: process.cwd() });
    } catch (err) {
      lines = (err as ConfigError).lines;
    }
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^OPERATORS_FILE: cannot read ${missing}: ENOENT`))]);
  });
});
