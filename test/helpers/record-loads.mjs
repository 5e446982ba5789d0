// Preloaded with `node --import` into a child process by test/build.test.ts: writes every module
// the process loads, one per line, to the file named by LB_RECORD_LOADS. ES modules are seen by a
// load hook (record-loads-hooks.mjs), CommonJS ones through require.cache when the process exits,
// followed by one line `execArgv <json>`. Plain JavaScript: the process under test has no loader.
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";
import process from "node:process";
import { URL } from "node:url";

const out = process.env.LB_RECORD_LOADS;
if (out) {
  register(new URL("./record-loads-hooks.mjs", import.meta.url));
  const require = createRequire(import.meta.url);
  process.on("exit", () => {
    const cjs = Object.keys(require.cache).map((path) => `file://${path}`);
    appendFileSync(out, [...cjs, `execArgv ${JSON.stringify(process.execArgv)}`].map((l) => `${l}\n`).join(""));
  });
}
