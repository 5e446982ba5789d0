import { Command, CommanderError } from "commander";
import { cliContext, processIo, type CliContext, type CliIo, type CliWritable } from "./io.js";
import { CliError, EXIT } from "./output.js";

export type { CliIo } from "./io.js";

type Register = (program: Command, cli: CliContext) => void;

/**
 * The top-level commands in the order --help lists them, with the module that defines each. A
 * command module imports what its actions need (express, better-sqlite3, the service, the
 * sandbox, zod, pino) inside the action, so defining a command costs next to nothing.
 */
const COMMANDS: [names: string[], load: () => Promise<Register>][] = [
  [["serve"], async () => (await import("./commands/serve.js")).serveCommand],
  [["migrate"], async () => (await import("./commands/migrate.js")).migrateCommand],
  [["import-sqlite"], async () => (await import("./commands/import-sqlite.js")).importSqliteCommand],
  [["sandbox"], async () => (await import("./commands/sandbox.js")).sandboxCommand],
  [["sub-resellers", "reseller"], async () => (await import("./commands/reseller-account.js")).resellerAccountCommands],
  [["trigger"], async () => (await import("./commands/trigger.js")).triggerCommand],
  [["renew"], async () => (await import("./commands/renew.js")).renewCommand],
  [["licenses"], async () => (await import("./commands/licenses.js")).licensesCommands],
  [["jobs"], async () => (await import("./commands/jobs.js")).jobsCommands],
  [["reconcile"], async () => (await import("./commands/reconcile.js")).reconcileCommand],
  [["prune"], async () => (await import("./commands/prune.js")).pruneCommand],
  [["adopt"], async () => (await import("./commands/adopt.js")).adoptCommand],
  [["secrets"], async () => (await import("./commands/secrets.js")).secretsCommands],
  [["operators"], async () => (await import("./commands/operators.js")).operatorsCommands],
  [["audit"], async () => (await import("./commands/audit.js")).auditCommand],
  [["forecast"], async () => (await import("./commands/forecast.js")).forecastCommand],
];

/**
 * The program for `argv`: when its first argument names a command, that command alone (its help
 * and its subcommands' are the same as in the full program); otherwise (--help, help, --version,
 * no argument, a typo) every command, so help and "unknown command" read as they always did.
 * test/build.test.ts checks what --help and `jobs list` load.
 */
export async function buildProgram(argv: string[] = [], cli: CliContext = cliContext(processIo())): Promise<Command> {
  const first = argv[2];
  const named = COMMANDS.find(([names]) => first !== undefined && names.includes(first));
  const registers = await Promise.all((named ? [named] : COMMANDS).map(([, load]) => load()));
  const program = new Command("license-bridge")
    .description("Billing-panel webhooks in, reseller licences out: registered, renewed and suspended exactly once.")
    .version("0.1.0")
    // Also before the command (`license-bridge --json jobs list`): commands read it with optsWithGlobals.
    .option("--json", "machine-readable output, for the commands that print")
    // Also before the command; read by the commands that change something (cli/audit-trail.ts).
    .option("--as <name>", "act as this operator of OPERATORS_FILE (or admin): the audit trail names them and their role applies (default: cli:<OS user>, an admin)")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride()
    .configureOutput(commanderOutput(cli.io));
  for (const register of registers) register(program, cli);
  // Every subcommand shares the override, so usage errors come back as exit code 2.
  const override = (c: Command) => {
    c.exitOverride();
    c.commands.forEach(override);
  };
  override(program);
  return program;
}

/**
 * Commander's output (help, usage errors) on the run's streams, sized and coloured by them and
 * the run's environment as commander's defaults do by the process's.
 */
function commanderOutput(io: CliIo) {
  const hasColors = (stream: CliWritable) => colourForced(io.env) ?? (stream.isTTY === true && stream.hasColors?.() === true);
  // A terminal's width, else commander's own 80.
  const width = (stream: CliWritable) => (stream.isTTY ? stream.columns : undefined) ?? 80;
  return {
    writeOut: (s: string) => void io.stdout.write(s),
    writeErr: (s: string) => void io.stderr.write(s),
    getOutHelpWidth: () => width(io.stdout),
    getErrHelpWidth: () => width(io.stderr),
    getOutHasColors: () => hasColors(io.stdout),
    getErrHasColors: () => hasColors(io.stderr),
  };
}

/** NO_COLOR, FORCE_COLOR and CLICOLOR_FORCE, read as commander's useColor() reads them (undefined: up to the terminal). */
function colourForced(env: NodeJS.ProcessEnv): boolean | undefined {
  if (env.NO_COLOR || env.FORCE_COLOR === "0" || env.FORCE_COLOR === "false") return false;
  if (env.FORCE_COLOR || env.CLICOLOR_FORCE !== undefined) return true;
  return undefined;
}

/**
 * The command that `argv` names deepest (the program when it names none), and its path: the
 * one whose subcommand is missing when commander shows help as an error.
 */
function namedCommand(program: Command, argv: string[]): { cmd: Command; path: string[] } {
  let cmd = program;
  const path: string[] = [];
  for (const arg of argv.slice(2)) {
    if (arg.startsWith("-")) continue;
    const sub = cmd.commands.find((c) => c.name() === arg || c.aliases().includes(arg));
    if (!sub) break;
    cmd = sub;
    path.push(sub.name());
  }
  return { cmd, path };
}

/**
 * Runs the CLI and returns its exit code: 0 ok, 1 failed, 2 usage, 78 configuration. It reads
 * and writes `io` only (the bin passes the process's), and leaves nothing open when it returns.
 */
export async function runCli(argv: string[], io: CliIo = processIo()): Promise<number> {
  const cli = cliContext(io);
  try {
    return await run(argv, cli);
  } finally {
    await cli.close();
  }
}

async function run(argv: string[], cli: CliContext): Promise<number> {
  const { stderr } = cli.io;
  const program = await buildProgram(argv, cli);
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version") return EXIT.ok;
      // commander.help is both `help` asked for (exit code 0) and the help it shows instead of an
      // error when a command needs a subcommand that was not given (exit code 1): a usage error,
      // so scripts must not read it as success (contract §5). Help alone is no clear line: add one.
      if (err.code === "commander.help") {
        if (err.exitCode === 0) return EXIT.ok;
        const { cmd, path } = namedCommand(program, argv);
        const choices = cmd.commands.map((c) => c.name()).filter((n) => n !== "help");
        stderr.write(`license-bridge: ${[...path, ""].join(": ")}a command is missing (one of ${choices.join(", ")})\n`);
      }
      return EXIT.usage;
    }
    // Configuration and database errors need their classes, and those their modules: loaded only here.
    const known = err instanceof CliError ? err : (await import("./context.js")).asCliError(err);
    if (known) {
      stderr.write(`license-bridge: ${known.message}\n`);
      return known.exitCode;
    }
    stderr.write(`license-bridge: ${(err as Error).message ?? String(err)}\n`);
    return EXIT.failed;
  }
}
