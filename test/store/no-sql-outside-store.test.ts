import { existsSync } from "node:fs";
import { dirname, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Issue #13: all SQL lives in src/store, behind the Store interface. Outside src/store:
 * - no module imports a database driver (better-sqlite3, pg or its pg-* helpers);
 * - no file of src/ imports from the stores' own folders (src/store/sqlite, src/store/postgres):
 *   the service and the CLI use src/store/open.ts and the Store interface (src/store/store.ts);
 * - no code sends SQL: no call of a driver's SQL methods (prepare, exec, pragma, transaction,
 *   query, ...) on a driver's object. Found by type, so `RegExp.exec` or a child process's
 *   `exec` never counts, and neither does a database handle reached through any path.
 * Tests follow the same rules, but may open the SQLite store's own modules (a read-only store,
 * the migration runner); only ALLOWED below sends SQL itself, for what a Store must not offer.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * The test files that may import a driver or call its SQL methods, each with what and why
 * (e.g. a PostgreSQL helper that creates the tests' database would be one). A stale entry
 * (the file no longer does it) fails too, so the list stays the truth.
 */
const ALLOWED: Record<string, { imports?: string[]; methods?: string[]; why: string }> = {
  "test/helpers/sqlite.ts": {
    methods: ["exec", "prepare", "all", "get", "run", "pragma"],
    why:
      "another process's hold on SQLite's write lock (BEGIN IMMEDIATE ... ROLLBACK on a second connection), " +
      "for test/e2e/write-lock.test.ts and test/observability/readiness.test.ts: SQLite-specific, and no Store operation may hold a lock; " +
      "and a table's entries in sqlite_master and sqlite_sequence, for test/migrations.test.ts's check of a rebuilt table: no Store operation offers the schema; " +
      "and rows as an older release wrote them, for test/migrations.test.ts: a database at an earlier migration has columns today's Store statements do not match; " +
      "and the file's page count, for test/store/prune-space.test.ts: the space a prune frees is SQLite's own accounting; " +
      "and the statements this thread runs (the driver's Statement methods wrapped, reached through a statement of a throwaway database), " +
      "for test/store/export-off-loop.test.ts: that the export reads nothing on the service's thread, which no Store operation could show",
  },
  "test/store/group-commit.test.ts": {
    methods: ["exec", "prepare", "all", "run", "pragma"],
    why:
      "the group commit and the WAL sync are SQLite's own machinery under the store, tested on a bare connection with a table of their own " +
      "(and the connection's temp_store, which keeps the group's savepoints off a temporary file)",
  },
  "test/helpers/postgres.ts": {
    imports: ["pg"],
    methods: ["query"],
    why:
      "creates each test's database in the scratch cluster, and the concurrency tests' third-party session " +
      "(an uncommitted row, a held table lock, pg_stat_activity, pg_terminate_backend, a newer release's migration row), " +
      "and the migration tests' rows as an older release wrote them (columns today's Store statements do not match)",
  },
};

/** Methods that carry SQL (better-sqlite3's Database and Statement, pg's Client, Pool and PoolClient). */
const SQL_METHODS = new Set(["prepare", "exec", "pragma", "transaction", "function", "aggregate", "table", "loadExtension", "run", "get", "all", "iterate", "query"]);
const DRIVER_TYPINGS = /[\\/]node_modules[\\/](@types[\\/])?(better-sqlite3|pg|pg-[\w-]+)[\\/]/;
const isDriverModule = (spec: string) => spec === "better-sqlite3" || spec === "pg" || /^pg[-/]/.test(spec);

export interface Violation {
  file: string;
  line: number;
  rule: "driver import" | "store internals" | "sql call";
  text: string;
}

function program(rootNames: string[], overlay: Map<string, string> = new Map()): ts.Program {
  const config = ts.readConfigFile(resolve(ROOT, "tsconfig.json"), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const host = ts.createCompilerHost(options, true);
  if (overlay.size) {
    const { getSourceFile, fileExists, readFile } = host;
    host.fileExists = (f) => overlay.has(resolve(f)) || fileExists(f);
    host.readFile = (f) => overlay.get(resolve(f)) ?? readFile(f);
    host.getSourceFile = (f, lang, onError, create) => {
      const text = overlay.get(resolve(f));
      return text === undefined ? getSourceFile(f, lang, onError, create) : ts.createSourceFile(f, text, lang, true);
    };
  }
  return ts.createProgram({ rootNames, options, host });
}

/** Where a relative module specifier of `file` points, as a path from the repository root. */
function target(file: string, spec: string): string {
  return relative(ROOT, resolve(dirname(file), spec)).split(sep).join("/");
}

/** The files of `prog` under `dirs` (paths from the root, `/`-separated) and their violations of the rules above. */
export function violations(prog: ts.Program, dirs: string[]): { checked: string[]; found: Violation[] } {
  const checker = prog.getTypeChecker();
  const checked: string[] = [];
  const found: Violation[] = [];
  const fromDriver = (type: ts.Type): boolean => {
    const t = checker.getNonNullableType(type);
    if (t.isUnion() || t.isIntersection()) return t.types.some(fromDriver);
    const symbol = t.getSymbol() ?? t.aliasSymbol;
    return (symbol?.getDeclarations() ?? []).some((d) => DRIVER_TYPINGS.test(d.getSourceFile().fileName));
  };
  for (const sf of prog.getSourceFiles()) {
    const rel = relative(ROOT, sf.fileName).split(sep).join("/");
    if (rel.startsWith("..") || rel.includes("node_modules/") || !dirs.some((d) => rel.startsWith(`${d}/`))) continue;
    if (rel.startsWith("src/store/")) continue;
    checked.push(rel);
    const report = (node: ts.Node, rule: Violation["rule"]) => {
      const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
      found.push({ file: rel, line: line + 1, rule, text: node.getText(sf).replace(/\s+/g, " ").slice(0, 120) });
    };
    const checkSpecifier = (node: ts.Node, spec: string) => {
      if (isDriverModule(spec)) {
        if (ALLOWED[rel]?.imports?.includes(spec)) allowedUse.add(`${rel}#import ${spec}`);
        else report(node, "driver import");
      }
      else if (rel.startsWith("src/") && spec.startsWith(".") && /^src\/store\/(?!store\.js$|open\.js$)/.test(target(sf.fileName, spec))) report(node, "store internals");
    };
    const visit = (node: ts.Node): void => {
      if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        checkSpecifier(node, node.moduleSpecifier.text);
      } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
        checkSpecifier(node, node.moduleReference.expression.text);
      } else if (ts.isCallExpression(node)) {
        const [first] = node.arguments;
        const dynamic = node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === "require");
        if (dynamic && first && ts.isStringLiteralLike(first)) checkSpecifier(node, first.text);
        const callee = node.expression;
        if (ts.isPropertyAccessExpression(callee) && SQL_METHODS.has(callee.name.text) && fromDriver(checker.getTypeAtLocation(callee.expression))) {
          if (ALLOWED[rel]?.methods?.includes(callee.name.text)) allowedUse.add(`${rel}#${callee.name.text}`);
          else report(node, "sql call");
        }
      } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
        checkSpecifier(node, node.argument.literal.text);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return { checked, found };
}

const allowedUse = new Set<string>();

describe("no SQL outside src/store (issue #13)", () => {
  it("src/ outside src/store and test/ import no driver and no store internals, and send no SQL (but for ALLOWED)", () => {
    const config = ts.readConfigFile(resolve(ROOT, "tsconfig.json"), ts.sys.readFile);
    const { fileNames } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
    const { checked, found } = violations(program(fileNames), ["src", "test"]);
    // The scan saw the code it is about: the service, the CLI, the runner, the tests.
    expect(checked).toEqual(expect.arrayContaining(["src/compose/service.ts", "src/cli/store.ts", "src/jobs/runner.ts", "test/helpers/bridge.ts", "test/helpers/sqlite.ts"]));
    expect(found, found.map((v) => `${v.file}:${v.line} ${v.rule}: ${v.text}`).join("\n")).toEqual([]);
    for (const [file, { imports = [], methods = [] }] of Object.entries(ALLOWED)) {
      expect(existsSync(resolve(ROOT, file)), `${file} is allowed SQL but does not exist`).toBe(true);
      for (const spec of imports) expect(allowedUse.has(`${file}#import ${spec}`), `${file} no longer imports ${spec}: remove it from ALLOWED`).toBe(true);
      for (const m of methods) expect(allowedUse.has(`${file}#${m}`), `${file} no longer calls ${m}(): remove it from ALLOWED`).toBe(true);
    }
  }, 120_000);

  it("catches each kind of violation, and leaves RegExp.exec, child_process.exec and other prepare() methods alone", () => {
    const fixture = (path: string) => resolve(ROOT, path);
    const files = new Map<string, string>([
      [
        fixture("src/webhooks/__fixture_bad__.ts"),
        [
          'import Database from "better-sqlite3";',
          'import type { Db } from "../store/sqlite/database.js";',
          'import { openSqliteStore, type SqliteStore } from "../store/sqlite/store.js";',
          'export function bad(db: Db, store: SqliteStore, maybe: Db | undefined) {',
          '  db.prepare("SELECT 1").get();',
          '  db.exec("DELETE FROM jobs");',
          '  maybe?.pragma("journal_mode");',
          '  store.db.prepare("UPDATE jobs SET state = \'queued\'").run();',
          '  return [new Database(":memory:"), openSqliteStore];',
          '}',
          'export const later = () => import("pg");',
        ].join("\n"),
      ],
      [
        fixture("src/webhooks/__fixture_good__.ts"),
        [
          'import { exec } from "node:child_process";',
          'import type { Store } from "../store/store.js";',
          'import { openStore } from "../store/open.js";',
          'const re = /a(b)/;',
          'export async function good(store: Store, text: string) {',
          '  const m = re.exec(text) ?? /x/.exec(text);',
          '  exec("true");',
          '  const form = { prepare: () => "ready", exec: (s: string) => s, query: (q: string) => q };',
          '  form.prepare(); form.exec("SELECT 1"); form.query("SELECT 1");',
          '  return [m, await store.jobs.counts(), openStore];',
          '}',
        ].join("\n"),
      ],
      [fixture("test/__fixture_sql__.test.ts"), ['import { openDatabase } from "../src/store/sqlite/database.js";', 'openDatabase(":memory:").exec("SELECT 1");'].join("\n")],
    ]);
    // The fixtures exist only in memory: nothing is written under src/ or test/.
    for (const path of files.keys()) expect(existsSync(path)).toBe(false);
    const { found } = violations(program([...files.keys()], files), ["src", "test"]);
    const brief = found.map((v) => `${v.file}:${v.line} ${v.rule}`);
    expect(brief).toEqual([
      "src/webhooks/__fixture_bad__.ts:1 driver import",
      "src/webhooks/__fixture_bad__.ts:2 store internals",
      "src/webhooks/__fixture_bad__.ts:3 store internals",
      "src/webhooks/__fixture_bad__.ts:5 sql call",
      "src/webhooks/__fixture_bad__.ts:5 sql call",
      "src/webhooks/__fixture_bad__.ts:6 sql call",
      "src/webhooks/__fixture_bad__.ts:7 sql call",
      "src/webhooks/__fixture_bad__.ts:8 sql call",
      "src/webhooks/__fixture_bad__.ts:8 sql call",
      "src/webhooks/__fixture_bad__.ts:11 driver import",
      "test/__fixture_sql__.test.ts:2 sql call",
    ]);
  }, 60_000);
});
