// The deployment kit (deploy/) against the code it deploys: what can be checked by reading the
// files, with no Docker, systemd, network or proxy. What was run for real is in deploy/README.md.
import { mkdtempSync, readFileSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/load.js";
import { CONFIG_KEYS, SECRET_KEYS, configSchema } from "../../src/config/schema.js";
import { healthRouter } from "../../src/admin/health-routes.js";
import type { Metrics } from "../../src/observability/metrics.js";
import type { Store } from "../../src/store/store.js";
import { serviceNodeFlags } from "../../bench/child.js";
import { RESELLER_CATALOGUE } from "../helpers/bridge.js";

const root = resolve(import.meta.dirname, "../..");
const read = (path: string) => readFileSync(join(root, path), "utf8");

/** Variables the kit may set that are not settings of the schema. */
const NOT_SETTINGS = new Set([
  "NODE_ENV", // Express and its dependencies: production behaviour
  "CONFIG_FILE", // where the settings file is (src/config/load.ts), not a setting itself
]);
/**
 * Settings being added in parallel (service contract section 1) that the kit already sets. Until
 * the schema has one, the service ignores it; once it has, the checks below apply to it as well.
 */
const COMING = new Set(["TRUST_PROXY"]);
const known = (key: string) => (CONFIG_KEYS as readonly string[]).includes(key) || NOT_SETTINGS.has(key) || COMING.has(key);

/** A Dockerfile's instructions, continuation lines joined, comments dropped, with the stage each is in. */
function dockerfile(text: string): { stage: number; op: string; args: string }[] {
  const joined = text
    .split("\n")
    .filter((l) => !/^\s*#/.test(l))
    .join("\n")
    .replace(/\\\n/g, " ");
  let stage = -1;
  const out: { stage: number; op: string; args: string }[] = [];
  for (const line of joined.split("\n")) {
    const m = /^\s*([A-Z]+)\s+(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === "FROM") stage++;
    out.push({ stage, op: m[1]!, args: m[2]!.trim() });
  }
  return out;
}

/** KEY=value lines (and `# KEY=value`, a setting shown but left off) of an env file. */
function envFile(text: string): { key: string; value: string; commented: boolean }[] {
  return [...text.matchAll(/^(#\s*)?([A-Z][A-Z0-9_]*)=(.*)$/gm)].map((m) => ({ key: m[2]!, value: m[3]!, commented: m[1] !== undefined }));
}

/** `key=value` lines of one section of a systemd unit, in order (a key may repeat). */
function unitSection(text: string, section: string): [string, string][] {
  const body = text.split(/^\[/m).find((s) => s.startsWith(`${section}]`)) ?? "";
  return [...body.matchAll(/^([A-Za-z]+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!.trim()]);
}

/** A top-level block of compose.yaml (by its key), up to the next top-level key. */
function composeBlock(text: string, key: string): string {
  const m = new RegExp(`^${key}:.*\\n((?:[ \\t#].*\\n|\\n)*)`, "m").exec(text);
  if (!m) throw new Error(`compose.yaml has no top-level ${key}`);
  return m[1]!;
}

/** A service of compose.yaml's `services:` (by its name), up to the next one. */
function composeService(text: string, name: string): string {
  const m = new RegExp(`^  ${name}:\\n((?:    .*\\n|\\s*\\n)*)`, "m").exec(composeBlock(text, "services"));
  if (!m) throw new Error(`compose.yaml has no service ${name}`);
  return m[1]!;
}

/** systemd time spans as this kit writes them: 45s, 2min, 1min 30s. */
function seconds(span: string): number {
  let total = 0;
  for (const [, n, unit] of span.matchAll(/(\d+)\s*(ms|s|min|m|h)?/g)) {
    total += Number(n) * ({ ms: 0.001, s: 1, min: 60, m: 60, h: 3600 }[unit ?? "s"] ?? 1);
  }
  return total;
}

const DEFAULTS = configSchema.parse({});
/** How long a stop may take by default: the jobs' grace, a provisioning call's wait. */
const DEFAULT_STOP_S = DEFAULTS.SHUTDOWN_GRACE_MS / 1000 + DEFAULTS.PROVISION_WAIT_SECONDS;

const docker = dockerfile(read("deploy/Dockerfile"));
const runtime = docker.filter((i) => i.stage === Math.max(...docker.map((d) => d.stage)));
const unit = read("deploy/systemd/license-bridge.service");
const service = unitSection(unit, "Service");
const compose = read("deploy/compose.yaml");
const envExample = envFile(read("deploy/license-bridge.env.example"));
/** The node flags of `npm start` (package.json): every other way the kit starts the service uses the same. */
const START_FLAGS = /^exec node((?: --\S+)*) bin\/license-bridge\.mjs serve$/.exec((JSON.parse(read("package.json")) as { scripts: { start: string } }).scripts.start)![1]!.split(" ").filter(Boolean);

describe("deploy kit", () => {
  it("sets only variables the service knows", () => {
    const dockerEnv = runtime
      .filter((i) => i.op === "ENV")
      .flatMap((i) => [...i.args.matchAll(/([A-Z][A-Z0-9_]*)=/g)].map((m) => m[1]!));
    const unitEnv = service.filter(([k]) => k === "Environment").map(([, v]) => v.split("=")[0]!);
    const cliEnv = [...read("deploy/systemd/license-bridge-cli").matchAll(/--setenv=([A-Z0-9_]+)=/g)].map((m) => m[1]!);
    const composeEnv = [...composeBlock(compose, "x-bridge-environment").matchAll(/^ {2}([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1]!);
    const sets = { Dockerfile: dockerEnv, unit: unitEnv, cli: cliEnv, compose: composeEnv, "license-bridge.env.example": envExample.map((e) => e.key) };
    for (const [where, keys] of Object.entries(sets)) {
      expect(keys.length, where).toBeGreaterThan(0);
      expect(keys.filter((k) => !known(k)), `${where} sets variables that are no setting of src/config/schema.ts`).toEqual([]);
    }
    expect(dockerEnv).toEqual(expect.arrayContaining(["HOST", "PORT", "DATABASE_PATH"]));
    expect(composeEnv).toEqual(expect.arrayContaining(["DATABASE_URL", "TRUST_PROXY"]));
  });

  it("commits no secret: every secret of the env examples is empty or commented out", () => {
    const filled = envExample.filter((e) => !e.commented && (SECRET_KEYS as readonly string[]).includes(e.key) && e.value !== "");
    expect(filled).toEqual([]);
    const compose = envFile(read("deploy/.env.example"));
    expect(compose.find((e) => e.key === "POSTGRES_PASSWORD")?.value).toBe("");
  });

  it("license-bridge.env.example as it is stops start-up naming the missing secrets; filled in, it is a valid live configuration", () => {
    const dir = mkdtempSync(join(tmpdir(), "lb-deploy-kit-"));
    const env: Record<string, string> = { DATABASE_PATH: join(dir, "license-bridge.db") };
    for (const e of envExample) if (!e.commented) env[e.key] = e.value;
    // Its catalogue path is the host's; the shipped catalogue's reseller products stand in for it
    // (the example configures the reseller alone, so the shipped Manage2 and CLN products would be refused).
    env.PRODUCTS_FILE = RESELLER_CATALOGUE;
    let lines: string[] = [];
    try {
      loadConfig({ env, cwd: dir });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      lines = err.lines;
    }
    for (const key of ["RESELLER_API_TOKEN", "WEBHOOK_SECRETS", "ADMIN_TOKEN"]) expect(lines.join("\n")).toContain(key);

    const filled = {
      ...env,
      RESELLER_API_TOKEN: "reseller-token",
      WEBHOOK_SECRETS: "whsec_" + Buffer.from("0123456789abcdef0123").toString("base64"),
      ADMIN_TOKEN: "0123456789abcdef0123",
      PROVISIONING_TOKEN: "fedcba98765432100123",
      // As compose.yaml sets it, with the password .env gives.
      DATABASE_URL: /^ {2}DATABASE_URL: (.+)$/m.exec(compose)![1]!.replace(/\$\{POSTGRES_PASSWORD[^}]*\}/, "0123abcd"),
    };
    const config = loadConfig({ env: filled, cwd: dir });
    expect(config.sandbox).toBe(false);
    expect(config.DATABASE_URL).toBe("postgres://license_bridge:0123abcd@postgres:5432/license_bridge");
  });

  it("runs `node bin/license-bridge.mjs serve` directly, in the image and under systemd", () => {
    const cmd = runtime.filter((i) => i.op === "CMD").at(-1);
    expect(JSON.parse(cmd!.args)).toEqual(["node", ...START_FLAGS, "bin/license-bridge.mjs", "serve"]);
    expect(runtime.some((i) => i.op === "ENTRYPOINT")).toBe(false);
    const user = runtime.filter((i) => i.op === "USER").at(-1)?.args;
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);

    const exec = service.find(([k]) => k === "ExecStart")![1];
    expect(exec).toMatch(/^\/\S*\/node( --\S+)* \S*bin\/license-bridge\.mjs serve$/);
    const wd = service.find(([k]) => k === "WorkingDirectory")![1];
    expect(exec).toContain(`${wd}/bin/license-bridge.mjs`);
    expect(service.find(([k]) => k === "EnvironmentFile")?.[1]).toBe("/etc/license-bridge/env");

    // The CLI wrapper runs the same node and release with the same settings as the unit.
    const cli = read("deploy/systemd/license-bridge-cli");
    expect(cli).toContain(`${exec.replace(/ serve$/, "")} "$@"`);
    expect(cli).toContain(`--working-directory=${wd}`);
    expect(cli).toContain("--property=EnvironmentFile=/etc/license-bridge/env");
    const unitEnv = service.filter(([k]) => k === "Environment").map(([, v]) => v);
    const cliEnv = [...cli.matchAll(/--setenv=(\S+)/g)].map((m) => m[1]!);
    expect(cliEnv.sort()).toEqual(unitEnv.sort());
  });

  it("starts node with the heap limit of `npm start` wherever the service starts: the image (compose too), systemd, its CLI, the bench", () => {
    // Why the limit: deploy/systemd/license-bridge.service, above ExecStart.
    expect(START_FLAGS.filter((f) => /^--max-old-space-size=\d+$/.test(f))).toHaveLength(1);
    const cmd = JSON.parse(runtime.filter((i) => i.op === "CMD").at(-1)!.args) as string[];
    expect(cmd.slice(1, -2)).toEqual(START_FLAGS);
    const exec = service.find(([k]) => k === "ExecStart")![1].split(" ");
    expect(exec.slice(1, -2)).toEqual(START_FLAGS);
    expect(read("deploy/systemd/license-bridge-cli")).toContain(` ${START_FLAGS.join(" ")} /opt/license-bridge/bin/license-bridge.mjs "$@"`);
    // Compose runs the image's CMD: no instance sets a command of its own.
    for (const block of [composeBlock(compose, "x-bridge"), ...["bridge-1", "bridge-2"].map((name) => composeService(compose, name))]) {
      expect(block).toMatch(/\S/);
      expect(block).not.toMatch(/^\s*command:/m);
    }
    expect(serviceNodeFlags({})).toEqual(START_FLAGS);
  });

  it("health checks ask routes the service serves: /healthz in the image, /readyz in the proxies", () => {
    const router = healthRouter({ store: {} as Store, metrics: {} as Metrics, upstreamUrls: [] });
    const routes = router.stack.map((layer) => layer.route?.path).filter(Boolean);
    const hc = runtime.find((i) => i.op === "HEALTHCHECK")!.args;
    const hcPath = /path:'([^']+)'/.exec(hc)?.[1];
    expect(hcPath).toBe("/healthz");
    expect(routes).toContain(hcPath);
    const caddyUri = /health_uri \{\$LB_HEALTH_URI:([^}]+)\}/.exec(read("deploy/caddy/Caddyfile"))?.[1];
    expect(caddyUri).toBe("/readyz");
    expect(routes).toContain(caddyUri);
    expect(/LB_HEALTH_URI: \$\{LB_HEALTH_URI:-([^}]+)\}/.exec(compose)?.[1]).toBe(caddyUri);
  });

  it("gives a stop more time than the default grace and provisioning wait", () => {
    expect(seconds(service.find(([k]) => k === "TimeoutStopSec")![1])).toBeGreaterThan(DEFAULT_STOP_S);
    expect(service.find(([k]) => k === "KillSignal")?.[1] ?? "SIGTERM").toBe("SIGTERM");
    const grace = /stop_grace_period: (\S+)/.exec(composeBlock(compose, "x-bridge"))?.[1];
    expect(seconds(grace!)).toBeGreaterThan(DEFAULT_STOP_S);
    for (const name of ["bridge-1", "bridge-2"]) expect(compose).toMatch(new RegExp(`^  ${name}:\\n    <<: \\*bridge$`, "m"));
  });

  it("proxies wait for a provisioning call longer than any PROVISION_WAIT_SECONDS the service accepts", () => {
    const nginx = read("deploy/nginx/license-bridge.conf");
    const provision = /location \/provision\/ \{([^}]*)\}/.exec(nginx)![1]!;
    const caddy = read("deploy/caddy/Caddyfile");
    const timeouts = {
      nginx: seconds(/proxy_read_timeout (\S+);/.exec(provision)![1]!),
      caddy: seconds(/response_header_timeout (\S+)/.exec(caddy)![1]!),
    };
    for (const [proxy, s] of Object.entries(timeouts)) {
      // The schema refuses a wait as long as the proxy's timeout, so every accepted one is shorter.
      expect(configSchema.safeParse({ PROVISION_WAIT_SECONDS: String(s) }).success, proxy).toBe(false);
      expect(s, proxy).toBeGreaterThan(DEFAULTS.PROVISION_WAIT_SECONDS);
    }
  });

  it("puts in the image every file the code reads beside dist/, and the build context lets in what the Dockerfile copies", () => {
    // Paths src/ resolves from import.meta.url (../../migrations, ../../config/..., ../../package.json).
    const beside = new Set<string>();
    const walk = (dir: string): string[] =>
      readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? walk(join(dir, f)) : [join(dir, f)]));
    for (const file of walk(join(root, "src")).filter((f) => f.endsWith(".ts"))) {
      // A file in src/<folder>/ reaches the package root with two ../ (dist/<folder>/ mirrors it).
      const depth = relative(join(root, "src"), file).split("/").length;
      for (const line of readFileSync(file, "utf8").split("\n").filter((l) => l.includes("import.meta.url"))) {
        for (const m of line.matchAll(/["']((?:\.\.\/)+)([\w.-]+)/g)) {
          if (m[1]!.length / 3 >= depth) beside.add(m[2]!);
        }
      }
    }
    expect([...beside].sort()).toEqual(expect.arrayContaining(["config", "migrations", "package.json"]));

    const copies = runtime.filter((i) => i.op === "COPY");
    const fromContext = copies.filter((i) => !i.args.startsWith("--from=")).map((i) => i.args.split(/\s+/)[0]!.replace(/\/$/, ""));
    const fromBuild = copies.filter((i) => i.args.startsWith("--from=")).map((i) => i.args.split(/\s+/)[1]!.replace(/^\/app\//, "").replace(/\/$/, ""));
    expect([...fromContext, ...fromBuild]).toEqual(expect.arrayContaining([...beside, "bin", "dist", "node_modules"]));

    // .dockerignore: everything out, then a whitelist. Each COPY source of the build context is in it.
    const ignore = read(".dockerignore").split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
    expect(ignore[0]).toBe("*");
    const allowed = ignore.filter((l) => l.startsWith("!")).map((l) => l.slice(1).replace(/\/$/, ""));
    const buildCopies = docker.filter((i) => i.op === "COPY" && !i.args.startsWith("--from=")).flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    for (const src of buildCopies) expect(allowed, `.dockerignore keeps ${src} out of the build context`).toContain(src.replace(/\/$/, ""));
    // The operator's env files live in deploy/: never in the context.
    expect(allowed.some((a) => a.startsWith("deploy") || a.includes("env"))).toBe(false);
  });

  it("compose.yaml's variables are in .env.example, and the Caddyfile's in compose.yaml", () => {
    const defined = new Set(envFile(read("deploy/.env.example")).map((e) => e.key));
    const used = [...compose.matchAll(/\$\{([A-Z][A-Z0-9_]*)(:?[-?][^}]*)?\}/g)].map((m) => m[1]!);
    expect(used.filter((v) => !defined.has(v))).toEqual([]);
    const proxyEnv = /^ {2}proxy:\n(?:(?: {4}.*)?\n)*/m.exec(compose)![0];
    const caddyVars = [...read("deploy/caddy/Caddyfile").matchAll(/\{\$([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!);
    for (const v of new Set(caddyVars)) expect(proxyEnv, `compose.yaml's proxy does not set ${v}`).toContain(`${v}:`);
  });
});
