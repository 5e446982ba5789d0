import type { Command } from "commander";
import type { Config } from "../../config/load.js";
import { CliError, emit, EXIT, table, type Output } from "../output.js";

/** What the actions need, imported when one runs (see buildProgram). */
async function deps() {
  const [{ configOrExit }, { accountIdArg, amountArg, nonNegativeOption }, { upstreamCall: call, v1ClientFromConfig: clientFor }] = await Promise.all([
    import("../context.js"),
    import("../arguments.js"),
    import("../upstream-from-config.js"),
  ]);
  return { configOrExit, accountIdArg, amountArg, nonNegativeOption, call, clientFor };
}

/** The bridge's own account, for `reseller balance` without an id. */
async function ownAccountOrExit(config: Config): Promise<string> {
  const { ownAccountId } = await import("../../reseller/balance.js");
  const id = ownAccountId(config);
  if (id === undefined) throw new CliError("give the account id (reseller balance <id>), or set RESELLER_ACCOUNT_ID to the reseller's own account", EXIT.usage);
  return id;
}

export function resellerAccountCommands(program: Command, output: (cmd: Command) => Output): void {
  const subs = program.command("sub-resellers").description("the reseller's sub-resellers (upstream)");
  subs
    .command("list")
    .option("--json", "machine-readable output")
    .action(async (_o, cmd: Command) => {
      const { configOrExit, call, clientFor } = await deps();
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
      const { configOrExit, nonNegativeOption, call, clientFor } = await deps();
      const rate = nonNegativeOption("--commission-rate", o.commissionRate);
      const password = process.env[o.passwordEnv];
      if (!password) throw new CliError(`${o.passwordEnv} is not set: put the initial password there`, 2);
      const r = await call(() =>
        clientFor(configOrExit(), "reseller").createSubReseller({ name: o.name, email: o.email, password, commission_rate: rate }),
      );
      emit(output(cmd), { id: r.id ?? null, raw: r.raw }, () => `created sub-reseller ${r.id ?? "(id not returned)"}`);
    });
  subs
    .command("credit <id> <amount>")
    .option("--json", "machine-readable output")
    .action(async (rawId: string, value: string, _o, cmd: Command) => {
      const { configOrExit, accountIdArg, amountArg, call, clientFor } = await deps();
      const id = accountIdArg(rawId);
      const n = amountArg(value);
      const r = await call(() => clientFor(configOrExit(), "reseller").creditSubReseller(id, { amount: n }));
      emit(output(cmd), { id, credited: n, balance: r.balance ?? null }, () => `credited ${n} to sub-reseller ${id}${r.balance !== undefined ? `; balance ${r.balance}` : ""}`);
    });

  const admin = program.command("reseller").description("reseller accounts (upstream admin operations; RESELLER_ADMIN_TOKEN)");
  admin
    .command("balance [id]")
    .description("a reseller account's balance; without [id], the bridge's own (RESELLER_ACCOUNT_ID; in sandbox mode the sandbox's reseller)")
    .option("--json", "machine-readable output")
    .action(async (rawId: string | undefined, _o, cmd: Command) => {
      const { configOrExit, accountIdArg, call, clientFor } = await deps();
      const config = configOrExit();
      const id = rawId === undefined ? await ownAccountOrExit(config) : accountIdArg(rawId);
      const r = await call(() => clientFor(config, "admin").resellerBalance(id));
      emit(output(cmd), { id, balance: r.balance ?? null }, () => `reseller ${id}: balance ${r.balance ?? "(not returned)"}`);
    });
  admin
    .command("credit <id> <amount>")
    .requiredOption("--description <text>", "why (kept by the reseller)")
    .option("--json", "machine-readable output")
    .action(async (rawId: string, value: string, o: { description: string }, cmd: Command) => {
      const { configOrExit, accountIdArg, amountArg, call, clientFor } = await deps();
      const id = accountIdArg(rawId);
      const n = amountArg(value);
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
      const { configOrExit, nonNegativeOption, call, clientFor } = await deps();
      const balance = nonNegativeOption("--balance", o.balance);
      const commission = nonNegativeOption("--commission", o.commission);
      const password = process.env[o.passwordEnv];
      if (!password) throw new CliError(`${o.passwordEnv} is not set: put the initial password there`, 2);
      const r = await call(() =>
        clientFor(configOrExit(), "admin").createReseller({ name: o.name, email: o.email, password, balance, domain: o.domain, commission }),
      );
      // The new reseller's API token is a secret: shown once to the operator, never logged.
      emit(output(cmd), { id: r.id ?? null, token: r.token ?? null }, () => `created reseller ${r.id ?? "(id not returned)"}${r.token ? `\napi token (shown once): ${r.token}` : ""}`);
    });
}
