#!/usr/bin/env node
// Runs the compiled CLI (dist/, built from src/ by `npm ci` through the prepare script, or by
// `npm run build`) with plain node: no TypeScript loader in production.
import { existsSync } from "node:fs";

const entry = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write("license-bridge: dist/ is not built: run `npm run build` (`npm ci` builds it)\n");
  process.exit(1);
}
const { runCli } = await import(entry.href);
process.exitCode = await runCli(process.argv);
