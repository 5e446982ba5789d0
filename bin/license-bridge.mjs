#!/usr/bin/env node
// Runs the compiled CLI with plain node, no TypeScript loader in production: dist/bundle/, which
// `npm ci` (the prepare script) and `npm run build` make from src/ (tsc to dist/, then
// scripts/bundle-cli.mjs).
import { existsSync } from "node:fs";

const entry = new URL("../dist/bundle/main.mjs", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write("license-bridge: dist/ is not built: run `npm run build` (`npm ci` builds it)\n");
  process.exit(1);
}
const { runCli } = await import(entry.href);
process.exitCode = await runCli(process.argv);
