import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
const TSC = createRequire(import.meta.url).resolve("typescript/bin/tsc");

function tsc(mode: "-b" | "-p") {
  return spawnSync(process.execPath, [TSC, mode, "tsconfig.build.json"], { cwd: ROOT, encoding: "utf8" });
}

/**
 * Tests that run the CLI or the service in a child process spawn `node bin/license-bridge.mjs`,
 * which runs the compiled dist/ (its bundle). So dist/ is brought up to date with src/ once, before any test:
 * `tsc -b` compares its inputs with the last build (dist/.tsbuildinfo) and does nothing, in about
 * half a second, when none changed; otherwise it recompiles what did. On a fresh clone `npm ci`
 * has just built; during development src/ was edited since, and the children run the edit.
 */
export default function buildDist(): void {
  // Each vitest project runs its global setups, in this one process: build once.
  const state = globalThis as { licenseBridgeDistBuilt?: boolean };
  if (state.licenseBridgeDistBuilt) return;
  state.licenseBridgeDistBuilt = true;
  compile();
  // Then the bundle the bin runs (scripts/bundle-cli.mjs), when dist/ changed since it was made.
  const bundle = spawnSync(process.execPath, ["scripts/bundle-cli.mjs", "--when-stale"], { cwd: ROOT, encoding: "utf8" });
  if (bundle.status !== 0) throw new Error(`could not bundle dist/ (scripts/bundle-cli.mjs exited ${bundle.status ?? bundle.signal}):\n${bundle.stdout}${bundle.stderr}`);
}

function compile(): void {
  const build = tsc("-b");
  removeOrphans();
  if (build.status === 0) return;
  // `tsc -b` fails on a type error although it has written the JavaScript; `tsc -p` tells the two
  // apart (exit 2: errors, outputs written). Tests ran on code with type errors before the build
  // existed (tsx strips types), so a type error is reported, not fatal: `npm run typecheck` is the gate.
  const check = build.status === 1 ? tsc("-p") : build;
  const diagnostics = `${check.stdout}${check.stderr}`.trim();
  if (check.status === 0) return;
  if (check.status === 2) {
    process.stderr.write(`\ndist/ was built, with type errors (run \`npm run typecheck\`):\n${diagnostics}\n\n`);
    return;
  }
  throw new Error(`could not build dist/ (tsc -b tsconfig.build.json exited ${build.status ?? build.signal}):\n${diagnostics || build.error?.message}`);
}

/**
 * tsc never deletes: the output of a source file deleted or renamed since the last build stays
 * in dist/, where emitted code that still imports it (a type error) would find it. Gone with it.
 */
function removeOrphans(): void {
  const dist = resolve(ROOT, "dist");
  if (!existsSync(dist)) return;
  for (const file of readdirSync(dist, { recursive: true, encoding: "utf8" })) {
    const source = /^(.*)\.js(\.map)?$/.exec(file);
    if (source && !existsSync(resolve(ROOT, "src", `${source[1]}.ts`))) rmSync(resolve(dist, file));
  }
}
