import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { tempDirs } from "./helpers/temp-dirs.js";

/**
 * scripts/bundle-cli.mjs --when-stale (the tests' global setup, the benchmarks) rebuilds the
 * bundle when dist/ changed since it was made. Run here on a copy of the script in a temporary
 * root (the repository's own dist/bundle/ is in use by the other suites), with a one-line file per entry point in dist/.
 */

const ROOT = resolve(import.meta.dirname, "..");
const dirs = tempDirs("lb-bundle-stale-");
afterEach(() => dirs.removeAll());

function project(): string {
  const root = dirs.make();
  mkdirSync(join(root, "scripts"));
  copyFileSync(join(ROOT, "scripts/bundle-cli.mjs"), join(root, "scripts/bundle-cli.mjs"));
  writeFileSync(join(root, "package.json"), JSON.stringify({ type: "module", dependencies: { zod: "*", commander: "*" } }));
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"), "dir");
  mkdirSync(join(root, "dist/cli"), { recursive: true });
  writeFileSync(join(root, "dist/cli/main.js"), 'export const marker = "first build";\n');
  // The bundle's other entry point (the SQLite export's worker thread).
  mkdirSync(join(root, "dist/store/sqlite"), { recursive: true });
  writeFileSync(join(root, "dist/store/sqlite/export-worker.js"), "export {};\n");
  return root;
}

function bundle(root: string, args: string[] = [], nodeArgs: string[] = []): void {
  const run = spawnSync(process.execPath, [...nodeArgs, "scripts/bundle-cli.mjs", ...args], { cwd: root, encoding: "utf8" });
  expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
}

describe("scripts/bundle-cli.mjs --when-stale", () => {
  it("rebuilds after a dist/ file was rewritten while the bundle was being made (tsc -b --watch, another test run)", () => {
    const root = project();
    // Rewrites dist/cli/main.js once esbuild has read it: just before the script's first write
    // into dist/bundle/ (the metafile), as a tsc writing at that moment would.
    const hook = join(root, "rewrite-during-build.mjs");
    writeFileSync(
      hook,
      `import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
const write = fs.writeFileSync;
let done = false;
fs.writeFileSync = function (file, ...rest) {
  if (!done && String(file).includes("/dist/bundle/")) {
    done = true;
    write(${JSON.stringify(join(root, "dist/cli/main.js"))}, 'export const marker = "written during the build";\\n');
  }
  return write.call(this, file, ...rest);
};
syncBuiltinESMExports();
`,
    );
    bundle(root, [], ["--import", pathToFileURL(hook).href]);
    expect(readFileSync(join(root, "dist/bundle/main.mjs"), "utf8")).toContain("first build");

    bundle(root, ["--when-stale"]);
    expect(readFileSync(join(root, "dist/bundle/main.mjs"), "utf8")).toContain("written during the build");
  });

  it("does nothing when nothing changed", () => {
    const root = project();
    bundle(root);
    const before = readFileSync(join(root, "dist/bundle/meta.json"), "utf8");
    writeFileSync(join(root, "dist/bundle/main.mjs"), "// left alone\n");
    bundle(root, ["--when-stale"]);
    expect(readFileSync(join(root, "dist/bundle/main.mjs"), "utf8")).toBe("// left alone\n");
    expect(readFileSync(join(root, "dist/bundle/meta.json"), "utf8")).toBe(before);
  });
});
