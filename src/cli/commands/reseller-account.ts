import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import type { Config } from "../../config/load.js";
import { ResellerError } from "../../reseller/errors.js";
import { createV1Client, type V1Client } from "../../reseller/v1.js";
import { DEFAULT_SANDBOX_TOKENS } from "../../sandbox/app.js";
import { cliLogger, configOrExit } from "../context.js";
import { CliError, emit, table, type Output } from "../output.js";

/** A v1 client with the reseller token, or the admin one for `reseller ...` commands. */
function clientFor(config: Config, role: "reseller" | "admin"): V1Client {
  const logger = cliLogger(config, config.LOG_LEVEL === "info" ? "warn" : config.LOG_LEVEL);
  if (config.upstream.mode === "live") {
    const token = role === "admin" ? (config.RESELLER_ADMIN_TOKEN ?? config.upstream.apiToken) : config.upstream.apiToken;
    return createV1Client({ baseUrl: config.upstream.apiUrl, token, timeoutMs: config.RESELLER_TIMEOUT_MS, logger });
  }
  const pointer = resolve(config.dataDir, "sandbox-upstream.json");
  if (!existsSync(pointer)) {
    throw new CliError(
      "sandbox mode and no running service: start it (npm start), or set RESELLER_API_URL to a reseller (or to `npm run sandbox`)",
    );
  }
  const { apiUrl } = z.object({ apiUrl: z.string() }).parse(JSON.parse(readFileSync(pointer, "utf8")));
  const token = role === "admin" ? DEFAULT_SANDBOX_TOKENS.admin : DEFAULT_SANDBOX_TOKENS.reseller;
  return createV1Client({ baseUrl: apiUrl, token, timeoutMs: config.RESELLER_TIMEOUT_MS, logger });
}

async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ResellerError) {
      const fields = "errors" in err && err.errors ? ` ${JSON.stringify(err.errors)}` : "";
      throw new CliError(`${err.message}${err.upstreamMessage ? `: ${err.upstreamMessage}` : ""}${fields}`);
    }
    throw err;
  }
}

const amount = (v: string) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new CliError(`amount must be a positive number, got "${v}"`, 2);
  return n;
};

export function resellerAccountCommands(program: Command, output: (cmd: Command) => Output): void {
  const subs = program.command("sub-resellers").description("the reseller's sub-resellers (upstream)");
  subs
    .command("list")
    .option("--json", "machine-readable output")
    .action(async (_o, cmd: Command) => {
      const list = await call(() => clientFor(configOrExit(), "reseller").listSubResellers());
      emit(output(cmd), { sub_resellers: list.map((s) => s.raw) }, () => table(list.map((s) => s.raw)));
    });
  subs
    .command("create")
    .requiredOption("--name <name>")
    .requiredOption("--email <email>")
    .requiredOption("--password-env <VAR>", "environment variable holding the initial password (kept off the command line)")
    .option("--commission-rate <rate>", "commission rate", "0")
    .option("--json", "machine-readable output")
    .action(async (o: { name: string; email: string; passwordEnv: string; commissionRate: string }, cmd: Command) => {
      const password = process.env[o.passwordEnv];
      if (!password) throw new CliError(`${o.passwordEnv} is not set: put the initial password there`, 2);
      const rate = Number(o.commissionRate);
      if (!Number.isFinite(rate) || rate < 0) throw new CliError("--commission-rate must be zero or more", 2);
      const r = await call(() =>
        clientFor(configOrExit(), "reseller").createSubReseller({ name: o.name, email: o.email, password, commission_rate: rate }),
      );
      emit(output(cmd), { id: r.id ?? null, raw: r.raw }, () => `created sub-reseller ${r.id ?? "(id not returned)"}`);
    });
  subs
    .command("credit <id> <amount>")
    .option("--json", "machine-readable output")
    .action(async (id: string, value: string, _o, cmd: Command) => {
      const n = amount(value);
      const r = await call(() => clientFor(configOrExit(), "reseller").creditSubReseller(id, { amount: n }));
      emit(output(cmd), { id, credited: n, balance: r.balance ?? null }, () => `credited ${n} to sub-reseller ${id}${r.balance !== undefined ? `; balance ${r.balance}` : ""}`);
    });

  const admin = program.command("reseller").description("reseller accounts (upstream admin operations; RESELLER_ADMIN_TOKEN)");
  admin
    .command("balance <id>")
    .option("--json", "machine-readable output")
    .action(async (id: string, _o, cmd: Command) => {
      const r = await call(() => clientFor(configOrExit(), "admin").resellerBalance(id));
      emit(output(cmd), { id, balance: r.balance ?? null }, () => `reseller ${id}: balance ${r.balance ?? "(not returned)"}`);
    });
  admin
    .command("credit <id> <amount>")
    .requiredOption("--description <text>", "why (kept by the reseller)")
    .option("--json", "machine-readable output")
    .action(async (id: string, value: string, o: { description: string }, cmd: Command) => {
      const n = amount(value);
      const r = await call(() => clientFor(configOrExit(), "admin").creditReseller(id, { amount: n, description: o.description }));
      emit(output(cmd), { id, credited: n, balance: r.balance ?? null }, () => `credited ${n} to reseller ${id}${r.balance !== undefined ? `; balance ${r.balance}` : ""}`);
    });
  admin
    .command("create")
    .requiredOption("--name <name>")
    .requiredOption("--email <email>")
    .requiredOption("--domain <domain>")
    .requiredOption("--password-env <VAR>", "environment variable holding the initial password")
    .option("--balance <n>", "opening balance", "0")
    .option("--commission <n>", "commission", "0")
    .option("--json", "machine-readable output")
    .action(async (o: { name: string; email: string; domain: string; passwordEnv: string; balance: string; commission: string }, cmd: Command) => {
      const password = process.env[o.passwordEnv];
      if (!password) throw new CliError(`${o.passwordEnv} is not set: put the initial password there`, 2);
      const balance = Number(o.balance);
      const commission = Number(o.commission);
      if (!(balance >= 0) || !(commission >= 0)) throw new CliError("--balance and --commission must be zero or more", 2);
      const r = await call(() =>
        clientFor(configOrExit(), "admin").createReseller({ name: o.name, email: o.email, password, balance, domain: o.domain, commission }),
      );
      // The new reseller's API token is a secret: shown once to the operator, never logged.
      emit(output(cmd), { id: r.id ?? null, token: r.token ?? null }, () => `created reseller ${r.id ?? "(id not returned)"}${r.token ? `\napi token (shown once): ${r.token}` : ""}`);
    });
}
