// The CLI as `npx license-bridge` and `npm start` run it: dist/cli/main.js (tsc's output) and
// what it imports of our code, zod and commander, bundled by esbuild into dist/bundle/. Each
// command's lazy import stays a chunk of its own (splitting), so a command still loads only what
// it needs. Why: Node 20 has no compile cache, and zod alone is 95 ES modules (64 of them
// locales) that every command loads through the config: resolving, reading and linking them one
// by one took about 90 ms of a `jobs list`.
// zod's `locales` namespace (every language's error messages, 40 % of zod's code) is bundled as
// English only: zod's own default, set by zod itself from locales/en.js, and nothing here
// switches language (no z.config, no z.locales). The tests run src/ with the whole of zod.
// Every other package stays in node_modules (native better-sqlite3; pino's worker transports;
// express and the rest load only under `serve`). Chunks sit in dist/bundle/, as deep as
// dist/<folder>/, so the paths our code resolves from import.meta.url (../../migrations,
// ../../config/...) find the same files.
import { build } from "esbuild";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// Not import.meta.dirname/filename: this runs in `npm ci`, and package.json allows Node 20.10.
const self = fileURLToPath(import.meta.url);
const root = resolve(dirname(self), "..");
const pkg = JSON.parse(readFileSync(resolve(root, "package.json"), "utf8"));
const BUNDLED = new Set(["zod", "commander"]);
const external = Object.keys(pkg.dependencies).filter((name) => !BUNDLED.has(name));

/** zod's `../locales/index.js` (every language) as a module with English alone. */
const englishOnlyZodLocales = {
  name: "zod-english-only",
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer) ? { path: resolve(args.resolveDir, "../locales/en.js"), namespace: "zod-locales" } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: root,
      loader: "js",
    }));
  },
};

const outdir = resolve(root, "dist/bundle");
const metaFile = resolve(outdir, "meta.json");

const stampFile = resolve(outdir, "inputs.json");

/**
 * What the bundle is made from, as it is now: each file of dist/ (the bundle aside), this script,
 * package.json and package-lock.json (zod and commander come from node_modules: an `npm update`
 * that changes them changes the lock), with its time and size.
 */
function inputs() {
  const dist = resolve(root, "dist");
  const files = readdirSync(dist, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".js") && !f.startsWith("bundle"))
    .map((f) => resolve(dist, f));
  return JSON.stringify(
    [...files, self, resolve(root, "package.json"), resolve(root, "package-lock.json")]
      .filter((f) => existsSync(f))
      .sort()
      .map((f) => {
        const { mtimeMs, size } = statSync(f);
        return [relative(root, f), mtimeMs, size];
      }),
  );
}

/**
 * `--when-stale` (the tests' global setup, the benchmarks): nothing to do when the inputs are as
 * they were when the bundle was made. They are recorded before esbuild reads them, so a file
 * written during the build (tsc -b --watch, another test run) shows as a change; and compared for
 * equality, not against the bundle's time, so a file replaced by an older one does too. `tsc -b`
 * rewrites only the outputs of changed sources, so after a build with no change the bundle stays
 * as it is, also under a test run that is using it.
 */
const before = inputs();
if (process.argv.includes("--when-stale") && existsSync(stampFile) && readFileSync(stampFile, "utf8") === before) process.exit(0);
rmSync(outdir, { recursive: true, force: true });
const result = await build({
  // The SQLite export's worker thread is started from its own file, found beside the chunk that
  // starts it (src/store/sqlite/export.ts): an entry point, so that file is dist/bundle/export-worker.mjs.
  entryPoints: { main: resolve(root, "dist/cli/main.js"), "export-worker": resolve(root, "dist/store/sqlite/export-worker.js") },
  absWorkingDir: root, // the metafile's paths are relative to it
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  outExtension: { ".js": ".mjs" },
  // commander is CommonJS: its require() of node: built-ins needs a require in an ES module.
  banner: { js: 'import { createRequire as __lbCreateRequire } from "node:module"; const require = __lbCreateRequire(import.meta.url);' },
  external,
  plugins: [englishOnlyZodLocales],
  sourcemap: true,
  // Which dist/ files each chunk holds: test/build.test.ts maps the chunks a command loaded back
  // to the modules, to show a command still loads only its own.
  metafile: true,
  logLevel: "warning",
});
writeFileSync(metaFile, JSON.stringify(result.metafile));
// Written last: without it, --when-stale builds again.
writeFileSync(stampFile, before);
