import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_SANDBOX_TOKENS } from "../src/vocabulary/sandbox-identity.js";
import { RESELLER_CATALOGUE, startTestSandbox, TEST_ADMIN_TOKEN, TEST_SECRET } from "./helpers/bridge.js";
import { freePort } from "./helpers/e2e-child.js";
import { tempDirs } from "./helpers/temp-dirs.js";
import { waitFor } from "./helpers/wait.js";

/**
 * What production runs: `npm start` and `license-bridge` are `node bin/license-bridge.mjs`, which
 * runs the compiled dist/ (built by the globalSetup here, by `npm ci` in production).
 *
 * How "no TypeScript loader" is shown: the CLI runs in a child process exactly as `npm start` runs
 * it, plus one observer, test/helpers/record-loads.mjs, preloaded with `--import`. It registers a
 * module load hook that writes down every ES module the process loads, and at exit adds every
 * CommonJS module (require.cache) and process.execArgv. A TypeScript loader has to be loaded to
 * work (tsx's hooks, esbuild; a `.ts` file cannot run without one), so it would be in that list.
 * The list is checked for being complete enough to mean something (it holds the bundle's entry and,
 * through the bundle's metafile, dist/cli/main.js and commander), and a control run with
 * `--import tsx` shows the same observer does see a loader.
 *
 * The bin runs dist/bundle/ (scripts/bundle-cli.mjs: tsc's dist/ with zod and commander bundled by
 * esbuild, a chunk per command). Which dist/ modules a run loaded is read from the chunks it loaded
 * and the bundle's metafile (dist/bundle/meta.json).
 */

const ROOT = resolve(import.meta.dirname, "..");
const BIN = resolve(ROOT, "bin/license-bridge.mjs");
const RECORDER = resolve(ROOT, "test/helpers/record-loads.mjs");
const pkg = JSON.parse(readFileSync(resolve(ROOT, "package.json"), "utf8")) as {
  version: string;
  main: string;
  bin: Record<string, string>;
  scripts: Record<string, string>;
};

/** Packages and files that would mean TypeScript is being compiled at run time. */
const TYPESCRIPT_LOADERS = /^(tsx|esbuild|@esbuild\/.*|typescript|ts-node|@swc\/.*|get-tsconfig)$/;

interface Loads {
  /** Every file the process loaded (ES and CommonJS modules), as paths. */
  files: string[];
  /** The npm packages those files belong to, sorted. */
  packages: string[];
  execArgv: string[];
}

const dirs = tempDirs("lb-build-");
const tempDir = () => dirs.make();
afterEach(() => dirs.removeAll());

function readLoads(path: string): Loads {
  const lines = readFileSync(path, "utf8").split("\n").filter(Boolean);
  const execArgv = JSON.parse(lines.find((l) => l.startsWith("execArgv "))!.slice("execArgv ".length)) as string[];
  const files = [...new Set(lines.filter((l) => l.startsWith("file://")).map((l) => fileURLToPath(l)))];
  const packages = new Set<string>();
  for (const file of files) {
    const m = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
    if (m) packages.add(m[1]!);
  }
  return { files, packages: [...packages].sort(), execArgv };
}

/** The project's own files among those loaded, relative to the root (node_modules left out). */
const projectFiles = (loads: Loads) => loads.files.filter((f) => !f.includes("/node_modules/")).map((f) => relative(ROOT, f));

interface BundleMeta {
  outputs: Record<string, { inputs: Record<string, unknown> }>;
}
const bundleMeta = () => JSON.parse(readFileSync(resolve(ROOT, "dist/bundle/meta.json"), "utf8")) as BundleMeta;

/** The files bundled into the chunks a run loaded (dist/cli/main.js, node_modules/zod/...), relative to the root. */
function bundledModules(loads: Loads): string[] {
  const { outputs } = bundleMeta();
  const chunks = projectFiles(loads).filter((f) => f.startsWith("dist/bundle/"));
  return chunks.flatMap((chunk) => Object.keys(outputs[chunk]?.inputs ?? {}));
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  loads: Loads;
}

/**
 * Runs `node <args>` with the recorder preloaded and no NODE_OPTIONS, in a scratch data directory.
 * `whileRunning` is called once the process is up (for the service); then it gets SIGTERM.
 */
async function runRecorded(
  args: string[],
  env: Record<string, string> = {},
  whileRunning?: (output: () => string) => Promise<void>,
  cwd = ROOT,
): Promise<Run> {
  const dir = tempDir();
  const record = join(dir, "loads.txt");
  const proc = spawn(process.execPath, ["--import", pathToFileURL(RECORDER).href, ...args], {
    cwd,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      LOG_LEVEL: "silent",
      DATABASE_PATH: join(dir, "data", "license-bridge.db"),
      LB_RECORD_LOADS: record,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  proc.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((done) => proc.once("close", (code) => done(code)));
  if (whileRunning) {
    try {
      await whileRunning(() => stdout + stderr);
    } finally {
      proc.kill("SIGTERM");
    }
  }
  const code = await exited;
  return { code, stdout, stderr, loads: readLoads(record) };
}

function expectNoTypeScriptLoader(loads: Loads): void {
  expect(loads.packages.filter((p) => TYPESCRIPT_LOADERS.test(p))).toEqual([]);
  expect(loads.files.filter((f) => /\.[mc]?tsx?$/.test(f))).toEqual([]);
  // Nothing but the recorder on the command line (no --import tsx, no --loader).
  expect(loads.execArgv).toEqual(["--import", pathToFileURL(RECORDER).href]);
  // And the record means something: it saw the compiled CLI and a dependency of it.
  expect(projectFiles(loads)).toContain("dist/bundle/main.mjs");
  expect(bundledModules(loads)).toContain("dist/cli/main.js");
  expect(bundledModules(loads).filter((f) => f.includes("node_modules/commander/")).length).toBeGreaterThan(0);
  // The project's own code comes from dist/ only: bin/ and the recorder aside, nothing from src/.
  const own = projectFiles(loads).filter((f) => f !== "bin/license-bridge.mjs" && !f.startsWith("test/helpers/record-loads"));
  expect(own.filter((f) => !f.startsWith("dist/"))).toEqual([]);
}

describe("production runs compiled JavaScript", () => {
  it("npm start, the bin and main point at the compiled code with plain node", () => {
    // exec: node replaces the shell, so npm's SIGTERM reaches the service (test/npm-start.test.ts).
    // Its one flag is the heap limit (why: deploy/systemd/license-bridge.service), no loader.
    expect(pkg.scripts.start).toMatch(/^exec node --max-old-space-size=\d+ bin\/license-bridge\.mjs serve$/);
    expect(pkg.bin["license-bridge"]).toBe("bin/license-bridge.mjs");
    expect(pkg.main).toBe("dist/cli/main.js");
    expect(existsSync(resolve(ROOT, pkg.main))).toBe(true);
    expect(readFileSync(BIN, "utf8")).not.toMatch(/tsx|\.ts\b/);
  });

  it("license-bridge --help lists every command without a TypeScript loader, and loads nothing but commander", async () => {
    const run = await runRecorded([BIN, "--help"]);

    expect(run.code).toBe(0);
    for (const command of ["serve", "migrate", "import-sqlite", "sandbox", "sub-resellers", "reseller", "trigger", "renew", "licenses", "jobs", "reconcile"]) {
      expect(run.stdout).toMatch(new RegExp(`^  ${command}\\b`, "m"));
    }
    expectNoTypeScriptLoader(run.loads);
    // Each command imports what its action needs when it runs: help needs none of it (commander
    // is in the bundle: no package is loaded from node_modules, and no zod is in what is loaded).
    expect(run.loads.packages).toEqual([]);
    expect(bundledModules(run.loads).filter((f) => f.includes("node_modules/zod/"))).toEqual([]);
  });

  it("license-bridge jobs list opens the database without express, pino or the mailer", async () => {
    const dir = tempDir();
    const env = { DATABASE_PATH: join(dir, "license-bridge.db") };
    expect((await runRecorded([BIN, "migrate"], env)).code).toBe(0);

    const list = await runRecorded([BIN, "jobs", "list", "--json"], env);

    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual({ jobs: [], next_cursor: null, total: 0 });
    expectNoTypeScriptLoader(list.loads);
    expect(list.loads.packages).toContain("better-sqlite3");
    // Only its own command module is loaded.
    expect(bundledModules(list.loads).filter((f) => f.startsWith("dist/cli/commands/")).sort()).toEqual(["dist/cli/commands/jobs.js"]);
    for (const heavy of ["express", "pino", "pino-pretty", "nodemailer", "prom-client", "cli-progress"]) expect(list.loads.packages).not.toContain(heavy);
  });

  it("npm start's command serves from dist/: migrations applied, package.json read, no TypeScript loader", async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    let openapiVersion: unknown;
    const run = await runRecorded([BIN, "serve"], { HOST: "127.0.0.1", PORT: String(port) }, async (output) => {
      await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, 20_000, "the service to be ready").catch((err: Error) => {
        throw new Error(`${err.message}\n--- service output ---\n${output()}`);
      });
      openapiVersion = ((await (await fetch(`${url}/openapi.json`)).json()) as { info: { version: string } }).info.version;
    });

    expect(run.code, run.stderr).toBe(0);
    // /readyz answers 200 only once the migrations (../../migrations from dist/store/) are applied;
    // the OpenAPI version is read from ../../package.json of dist/http/ (0.0.0 if it were not found).
    expect(openapiVersion).toBe(pkg.version);
    expectNoTypeScriptLoader(run.loads);
    expect(bundledModules(run.loads)).toContain("dist/compose/service.js");
    expect(bundledModules(run.loads)).toContain("dist/sandbox/app.js");
    expect(run.loads.packages).toContain("express");
  });

  it("a live service loads none of the sandbox's code; a sandbox-mode one does (the test above)", async () => {
    const sb = await startTestSandbox();
    try {
      const port = await freePort();
      const live = {
        HOST: "127.0.0.1",
        PORT: String(port),
        RESELLER_API_URL: sb.running.apiUrl,
        RESELLER_API_TOKEN: DEFAULT_SANDBOX_TOKENS.reseller,
        PRODUCTS_FILE: RESELLER_CATALOGUE,
        WEBHOOK_SECRETS: TEST_SECRET,
        ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      };
      let exported: Response | undefined;
      const run = await runRecorded([BIN, "serve"], live, async (output) => {
        await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, 20_000, "the live service to be ready").catch((err: Error) => {
          throw new Error(`${err.message}\n--- service output ---\n${output()}`);
        });
        // The export's worker thread starts from its own file of the bundle (export-worker.mjs):
        // the answer ends only once the worker has read that there is no licence.
        exported = await fetch(`http://127.0.0.1:${port}/admin/licenses/export`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
        expect(exported.status, output()).toBe(200);
        expect(await exported.text()).toBe("");
      });
      expect(run.code, run.stderr).toBe(0);
      expect(exported?.status).toBe(200);
      expect(bundledModules(run.loads)).toContain("dist/compose/service.js");
      expect(bundledModules(run.loads).filter((f) => f.startsWith("dist/sandbox/"))).toEqual([]);
    } finally {
      await sb.close();
    }
  });

  it("the observer does see a TypeScript loader when there is one (control)", async () => {
    const run = await runRecorded(["--import", "tsx", "src/cli/output.ts"]);

    expect(run.code, run.stderr).toBe(0);
    expect(run.loads.packages).toContain("tsx");
    expect(projectFiles(run.loads)).toContain("src/cli/output.ts");
  });
});

describe("dist/ resolves files as src/ does", () => {
  const sources = readdirSync(resolve(ROOT, "src"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));

  it("mirrors src/ file for file, so a path relative to a module means the same from either", () => {
    const missing = sources.filter((f) => !existsSync(resolve(ROOT, "dist", f.replace(/\.ts$/, ".js"))));
    expect(missing).toEqual([]);
  });

  it("every module that finds files from its own location is checked here", () => {
    const users = sources.filter((f) => /import\.meta|__dirname|__filename/.test(readFileSync(resolve(ROOT, "src", f), "utf8"))).sort();
    // migration-files.ts, mail/index.ts, catalog.ts and sqlite/export.ts are checked below; openapi.ts by the service test above.
    expect(users).toEqual(["admin/openapi.ts", "catalog/catalog.ts", "mail/index.ts", "store/migration-files.ts", "store/sqlite/export.ts"]);
  });

  it("the bundle's chunks sit in dist/bundle/, as deep as dist/<folder>/, so those modules' relative paths hold there too", () => {
    const { outputs } = bundleMeta();
    const chunks = Object.keys(outputs).filter((f) => f.endsWith(".mjs"));
    expect(chunks.filter((f) => dirname(f) !== "dist/bundle")).toEqual([]);
    for (const user of ["admin/openapi.js", "catalog/catalog.js", "mail/index.js", "store/migration-files.js", "store/sqlite/export.js"]) {
      expect(chunks.filter((chunk) => `dist/${user}` in outputs[chunk]!.inputs), user).toHaveLength(1);
    }
  });

  it("the SQLite export's worker is the file beside the module that starts it, in each form: .ts in src/, .js in dist/, .mjs in dist/bundle/", () => {
    // src/store/sqlite/export.ts starts `./export-worker<its own extension>`.
    expect(existsSync(resolve(ROOT, "src/store/sqlite/export-worker.ts"))).toBe(true);
    expect(existsSync(resolve(ROOT, "dist/store/sqlite/export-worker.js"))).toBe(true);
    const { outputs } = bundleMeta() as { outputs: Record<string, { entryPoint?: string }> };
    expect(outputs["dist/bundle/export-worker.mjs"]?.entryPoint).toBe("dist/store/sqlite/export-worker.js");
  });

  it("the bundled service, started outside the repository, finds the shipped catalogue, mail templates, migrations and package.json", async () => {
    const elsewhere = tempDir();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    let openapiVersion: unknown;
    const run = await runRecorded([BIN, "serve"], { HOST: "127.0.0.1", PORT: String(port), LOG_LEVEL: "warn" }, async (output) => {
      await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, 20_000, "the service to be ready").catch((err: Error) => {
        throw new Error(`${err.message}\n--- service output ---\n${output()}`);
      });
      openapiVersion = ((await (await fetch(`${url}/openapi.json`)).json()) as { info: { version: string } }).info.version;
    }, elsewhere);

    expect(run.code, run.stderr).toBe(0);
    expect(openapiVersion).toBe(pkg.version);
    // No ./config/ where it runs: the catalogue (else no start) and templates (else this warning) are the shipped ones.
    expect(existsSync(join(elsewhere, "config"))).toBe(false);
    expect(run.stdout + run.stderr).not.toMatch(/template missing/);
    expect(projectFiles(run.loads).filter((f) => !f.startsWith("dist/bundle/") && !f.startsWith("bin/") && !f.startsWith("test/helpers/"))).toEqual([]);
  });

  it("from dist/, the migrations, the shipped mail templates and the shipped catalogue are found in the repository", async () => {
    const fromDist = async (file: string) => (await import(pathToFileURL(resolve(ROOT, "dist", file)).href)) as Record<string, unknown>;
    const migrations = await fromDist("store/sqlite/migrations.js");
    const pgMigrations = await fromDist("store/postgres/migrations.js");
    const mail = await fromDist("mail/index.js");
    const catalog = await fromDist("catalog/catalog.js");

    expect(migrations.MIGRATIONS_ROOT).toBe(resolve(ROOT, "migrations"));
    expect(migrations.MIGRATIONS_DIR).toBe(resolve(ROOT, "migrations/sqlite"));
    expect((pgMigrations.readPgMigrations as () => unknown[])().length).toBe((migrations.readMigrations as () => unknown[])().length);
    expect(mail.SHIPPED_TEMPLATES_DIR).toBe(resolve(ROOT, "config/mail"));
    expect(existsSync(join(mail.SHIPPED_TEMPLATES_DIR as string, "install.txt"))).toBe(true);
    expect((migrations.readMigrations as () => unknown[])().length).toBeGreaterThan(0);
    expect(catalog.SHIPPED_CATALOG_FILE).toBe(resolve(ROOT, "config/products.json"));
  });
});
