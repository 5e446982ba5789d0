#!/usr/bin/env node
// Runs the TypeScript CLI directly through tsx, so `npm ci && npm start` needs no build step.
import { register } from "tsx/esm/api";

register();
const { runCli } = await import("../src/cli/main.ts");
process.exitCode = await runCli(process.argv);
