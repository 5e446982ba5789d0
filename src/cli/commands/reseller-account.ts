import type { Command } from "commander";
import type { Config } from "../../config/load.js";
import type { CliContext } from "../io.js";
import { CliError, emit, EXIT, table } from "../output.js";

/** What the actions need, imported when one runs (see buildProgram). */
async function deps(cli: CliContext) {
  const [{ configOrExit }, { accountIdArg, amountArg, nonNegativeOption }, { upstreamCall: call, v1ClientFromConfig }, { auditedUpstream, cliActor }, { AUDIT_ACTIONS }] =
    await Promise.all([
      import("../context.js"),
      import("../arguments.js"),
      import("../upstream-from-config.js"),
      import("../audit-trail.js"),
      import("../../vocabulary/audit.js"),
    ]);
  /** An admin's operation on the reseller's money or accounts: refused below admin, and audited ok or failed. */
  const audited = <T>(config: Config, cmd: Command, action: string, detail: string, run: () => Promise<T>) =>
    auditedUpstream(config, cli.io, cliActor(config, (cmd.optsWithGlobals() as { as?: string }).as, cli.io.env), "admin", action, detail, run);
  const clientFor = (config: Config, role: "reseller" | "admin") => v1ClientFromConfig(config, cli, role);
  return { configOrExit, accountIdArg, amountArg, nonNegativeOption, call, clientFor, audited, AUDIT_ACTIONS };
}

/** The bridge's own account, for `reseller balance` without an id. */
async function ownAccountOrExit(config: Config): Promise<string> {
  const { ownAccountId } = await import("../../reseller/balance.js");
  const id = ownAccountId(config);
  if (id === undefined) throw new CliError("give the account id (reseller balance <id>), or set RESELLER_ACCOUNT_ID to the reseller's own account", EXIT.usage);
  return id;
}

export function resellerAccountCommands(program: Command, cli: CliContext): void {
  const subs = program.command("sub-resellers").description("the reseller's sub-resellers (upstream)");
  subs
    .command("list")
    .option("--json", "machine-readable output")
    .action(async (_o, cmd: Command) => {
      const { configOrExit, call, clientFor } = await deps(cli);
      const list = await call(() => clientFor(configOrExit(cli.io), "reseller").listSubResellers());
      emit(cli.output(cmd), { sub_resellers: list.map((s) => s.raw) }, () => table(list.map((s) => s.raw)));
    });
  subs
    .command("create")
    .requiredOption("--name <name>")
    .requiredOption("--email <email>")
    .requiredOption("--password-env <VAR>", "environment variable holding the initial password (kept off the command line)")
    .option("--commission-rate <rate>", "commission rate", "0")
    .option("--json", "machine-readable output")
    .action(async (o: { name: string; email: string; passwordEnv: string; commissionRate: string }, cmd: Command) => {
      const { configOrExit, nonNegativeOption, call, clientFor, audited, AUDIT_ACTIONS } = await deps(cli);
      const rate = nonNegativeOption("--commission-rate", o.commissionRate);
      const password = cli.io.env[o.passwordEnv];
      if (!password) throw new CliError(`${o.passwordEnv} is not set: put the initial password there`, 2);
      const config = configOrExit(cli.io);
      const r = await audited(config, cmd, AUDIT_ACTIONS.subResellerCreate, `sub-reseller ${o.name} <${o.email}>`, () =>
        call(() => clientFor(config, "reseller").createSubReseller({ name: o.name, email: o.email, password, commission_rate: rate })),
      );
      emit(cli.output(cmd), { id: r.id ?? null, raw: r.raw }, () => `created sub-reseller ${r.id ?? "(id not returned)"}`);
    });
  subs
    .command("credit <id> <amount>")
    .option("--json", "machine-readable output")
    .action(async (rawId: string, value: string, _o, cmd: Command) => {
      const { configOrExit, accountIdArg, amountArg, call, clientFor, audited, AUDIT_ACTIONS } = await deps(cli);
      const id = accountIdArg(rawId);
      const n = amountArg(value);
      const config = configOrExit(cli.io);
      const r = await audited(config, cmd, AUDIT_ACTIONS.subResellerCredit, `credit ${n} to sub-reseller ${id}`, () =>
        call(() => clientFor(config, "reseller").creditSubReseller(id, { amount: n })),
      );
      emit(cli.output(cmd), { id, credited: n, balance: r.balance ?? null }, () => `credited ${n} to sub-reseller ${id}${r.balance !== undefined ? `; balance ${r.balance}` : ""}`);
    });

  const admin = program.command("reseller").description("reseller accounts (upstream admin operations; RESELLER_ADMIN_TOKEN)");
  admin
    .command("balance [id]")
    .description("a reseller account's balance; without [id], the bridge's own (RESELLER_ACCOUNT_ID; in sandbox mode the sandbox's reseller)")
    .option("--json", "machine-readable output")
    .action(async (rawId: string | undefined, _o, cmd: Command) => {
      const { configOrExit, accountIdArg, call, clientFor } = await deps(cli);
      const config = configOrExit(cli.io);
      const id = rawId === undefined ? await ownAccountOrExit(config) : accountIdArg(rawId);
      const r = await call(() => clientFor(config, "admin").resellerBalance(id));
      emit(cli.output(cmd), { id, balance: r.balance ?? null }, () => `reseller ${id}: balance ${r.balance ?? "(not returned)"}`);
    });
  admin
    .command("credit <id> <amount>")
    .requiredOption("--description <text>", "why (kept by the reseller)")
    .option("--json", "machine-readable output")
    .action(async (rawId: string, value: string, o: { description: string }, cmd: Command) => {
      const { configOrExit, accountIdArg, amountArg, call, clientFor, audited, AUDIT_ACTIONS } = await deps(cli);
      const id = accountIdArg(rawId);
      const n = amountArg(value);
      const config = configOrExit(cli.io);
      const r = await audited(config, cmd, AUDIT_ACTIONS.resellerCredit, `credit ${n} to reseller ${id}`, () =>
        call(() => clientFor(config, "admin").creditReseller(id, { amount: n, description: o.description })),
      );
      emit(cli.output(cmd), { id, credited: n, balance: r.balance ?? null }, () => `credited ${n} to reseller ${id}${r.balance !== undefined ? `; balance ${r.balance}` : ""}`);
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
      const { configOrExit, nonNegativeOption, call, clientFor, audited, AUDIT_ACTIONS } = await deps(cli);
      const balance = nonNegativeOption("--balance", o.balance);
      const commission = nonNegativeOption("--commission", o.commission);
      const password = cli.io.env[o.passwordEnv];
      if (!password) throw new CliError(`${o.passwordEnv} is not set: put the initial password there`, 2);
      const config = configOrExit(cli.io);
      // The detail names the account, never its password or the token the reseller answers with.
      const r = await audited(config, cmd, AUDIT_ACTIONS.resellerCreate, `reseller ${o.name} <${o.email}> at ${o.domain}, opening balance ${balance}`, () =>
        call(() => clientFor(config, "admin").createReseller({ name: o.name, email: o.email, password, balance, domain: o.domain, commission })),
      );
      // The new reseller's API token is a secret: shown once to the operator, never logged.
      emit(cli.output(cmd), { id: r.id ?? null, token: r.token ?? null }, () => `created reseller ${r.id ?? "(id not returned)"}${r.token ? `\napi token (shown once): ${r.token}` : ""}`);
    });
}
