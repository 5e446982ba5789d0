// The README's settings table, generated from the code so it cannot drift from it:
//   npm run docs:settings             rewrite the README's generated blocks
//   npm run docs:settings -- --check  exit 1 when the README differs (test/docs/settings-table.test.ts does the same)
// Meanings: src/config/settings-docs.ts. Defaults: the zod schemas. Secret: SECRET_KEYS. Live only:
// LIVE_KEYS. When a change takes effect: RESTART_ONLY (src/config/restart-only.ts) and the docs' takesEffect.
import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { z } from "zod";
import { OTHER_KNOWN_VARIABLES } from "../src/config/load.js";
import { configSchema, LIVE_KEYS, SECRET_KEYS } from "../src/config/schema.js";
import { OTHER_SETTING_DOCS, SETTING_DOCS, type SettingDoc } from "../src/config/settings-docs.js";
import { sandboxEnvSchema } from "../src/sandbox/main.js";
import { RESTART_ONLY } from "../src/config/restart-only.js";

export const README = resolve(import.meta.dirname, "../README.md");

/** When a change of the variable takes effect in a running service. */
export type TakesEffect = "SIGHUP" | "restart" | "each command";

export interface SettingRow {
  variable: string;
  meaning: string;
  /** Markdown. */
  default: string;
  secret: boolean;
  liveOnly: boolean;
  takesEffect: TakesEffect;
}

/** The schema's default of a field, looking through optional, preprocess and pipes; undefined: none. */
export function defaultOf(schema: z.ZodType): unknown {
  const def = (schema as unknown as { def: { type: string; defaultValue?: unknown; innerType?: z.ZodType; in?: z.ZodType; out?: z.ZodType } }).def;
  switch (def.type) {
    case "default":
    case "prefault":
      return def.defaultValue;
    case "optional":
    case "nullable":
      return def.innerType ? defaultOf(def.innerType) : undefined;
    case "pipe": {
      const out = def.out ? defaultOf(def.out) : undefined;
      return out !== undefined ? out : def.in ? defaultOf(def.in) : undefined;
    }
    default:
      return undefined;
  }
}

function defaultCell(variable: string, schemaDefault: unknown, doc: Pick<SettingDoc, "unset">): string {
  if (schemaDefault !== undefined && doc.unset !== undefined) {
    throw new Error(`${variable}: the schema's default (${String(schemaDefault)}) decides the table; drop "unset" from its description`);
  }
  if (schemaDefault !== undefined) return `\`${String(schemaDefault)}\``;
  return doc.unset ?? "unset";
}

/** Every variable the bridge reads, in the order of configSchema, then the ones read outside it. */
export function settingsRows(): SettingRow[] {
  const restartOnly = new Set<string>(RESTART_ONLY);
  const rows: SettingRow[] = [];
  for (const [variable, field] of Object.entries(configSchema.shape) as [keyof typeof SETTING_DOCS, z.ZodType][]) {
    const doc = SETTING_DOCS[variable];
    if (doc.takesEffect === "restart" && restartOnly.has(variable)) {
      throw new Error(`${variable} is in RESTART_ONLY already: drop takesEffect from its description`);
    }
    rows.push({
      variable,
      meaning: doc.meaning,
      default: defaultCell(variable, defaultOf(field), doc),
      secret: (SECRET_KEYS as readonly string[]).includes(variable),
      liveOnly: LIVE_KEYS.includes(variable),
      takesEffect: restartOnly.has(variable) ? "restart" : (doc.takesEffect ?? "SIGHUP"),
    });
  }
  const sandboxShape = sandboxEnvSchema.shape as Record<string, z.ZodType>;
  for (const key of Object.keys(sandboxShape)) {
    if (!(key in configSchema.shape) && !(OTHER_KNOWN_VARIABLES as readonly string[]).includes(key)) {
      throw new Error(`the sandbox reads ${key}: add it to OTHER_KNOWN_VARIABLES (src/config/load.ts) and describe it in settings-docs.ts`);
    }
  }
  for (const variable of OTHER_KNOWN_VARIABLES) {
    const doc = OTHER_SETTING_DOCS[variable];
    const field = sandboxShape[variable];
    rows.push({
      variable,
      meaning: doc.meaning,
      default: defaultCell(variable, field ? defaultOf(field) : undefined, doc),
      secret: false,
      liveOnly: false,
      takesEffect: doc.takesEffect,
    });
  }
  return rows;
}

const cell = (s: string) => s.replace(/\|/g, "\\|");

/** The Markdown table of every variable. */
export function renderSettingsTable(rows = settingsRows()): string {
  const lines = [
    "| variable | meaning | default | secret | live only | a change takes effect on |",
    "|---|---|---|---|---|---|",
    ...rows.map((r) =>
      `| \`${r.variable}\` | ${cell(r.meaning)} | ${cell(r.default)} | ${r.secret ? "secret" : ""} | ${r.liveOnly ? "live" : ""} | ${r.takesEffect} |`,
    ),
  ];
  return lines.join("\n");
}

/** For the rotation runbook: the service's secrets by when a new value takes effect. */
export function renderSecretsTakeEffect(rows = settingsRows()): string {
  const secrets = rows.filter((r) => r.secret);
  const names = (t: TakesEffect) =>
    secrets
      .filter((r) => r.takesEffect === t)
      .map((r) => `\`${r.variable}\``)
      .join(", ");
  return [
    `- **A SIGHUP applies** (no restart): ${names("SIGHUP")}.`,
    `- **A restart is needed** (the running service read it once, at start): ${names("restart")}.`,
    ...(names("each command") ? [`- **Read by each CLI command**, not by the service: ${names("each command")}.`] : []),
  ].join("\n");
}

/** The generated blocks of the README: name → content between `<!-- name:start -->` and `<!-- name:end -->`. */
export function generatedBlocks(): Record<string, string> {
  const rows = settingsRows();
  return { settings: renderSettingsTable(rows), "secrets-reload": renderSecretsTakeEffect(rows) };
}

/** The README with every generated block replaced by what the code says now. */
export function updateReadme(text: string, blocks = generatedBlocks()): string {
  let out = text;
  for (const [name, content] of Object.entries(blocks)) {
    const start = `<!-- ${name}:start (generated by npm run docs:settings; edit src/config/settings-docs.ts) -->`;
    const end = `<!-- ${name}:end -->`;
    const from = out.indexOf(start);
    const to = out.indexOf(end);
    if (from < 0 || to < from) throw new Error(`README.md lacks the markers ${start} … ${end}`);
    out = `${out.slice(0, from + start.length)}\n${content}\n${out.slice(to)}`;
  }
  return out;
}

function main(argv: string[]): number {
  const text = readFileSync(README, "utf8");
  let next: string;
  try {
    next = updateReadme(text);
  } catch (err) {
    console.error((err as Error).message);
    return 1;
  }
  if (argv.includes("--check")) {
    if (next === text) return 0;
    console.error("README.md's settings table is not what the code says: run `npm run docs:settings` (meanings: src/config/settings-docs.ts)");
    return 1;
  }
  if (next !== text) writeFileSync(README, next);
  console.log(next === text ? "README.md is up to date" : "README.md updated");
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) process.exitCode = main(process.argv.slice(2));
