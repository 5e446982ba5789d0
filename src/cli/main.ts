import { Command, CommanderError } from "commander";
import { jobsCommands } from "./commands/jobs.js";
import { licensesCommands } from "./commands/licenses.js";
import { migrateCommand } from "./commands/migrate.js";
import { reconcileCommand } from "./commands/reconcile.js";
import { renewCommand } from "./commands/renew.js";
import { resellerAccountCommands } from "./commands/reseller-account.js";
import { sandboxCommand } from "./commands/sandbox.js";
import { serveCommand } from "./commands/serve.js";
import { triggerCommand } from "./commands/trigger.js";
import { CliError, EXIT, stdio, type Output } from "./output.js";

function outputOf(cmd: Command): Output {
  return { json: Boolean(cmd.optsWithGlobals().json), ...stdio };
}

/**
 * Every command is defined here, so `--help` lists them all; each command module imports what
 * its action needs (express, better-sqlite3, the service, the sandbox, zod, pino) inside the
 * action, so `--help` loads none of it and a command loads only its own (test/build.test.ts).
 */
export function buildProgram(): Command {
  const program = new Command("license-bridge")
    .description("Billing-panel webhooks in, reseller licences out: registered, renewed and suspended exactly once.")
    .version("0.1.0")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride()
    .configureOutput({ writeOut: (s) => process.stdout.write(s), writeErr: (s) => process.stderr.write(s) });
  serveCommand(program);
  migrateCommand(program, outputOf);
  sandboxCommand(program);
  resellerAccountCommands(program, outputOf);
  triggerCommand(program, outputOf);
  renewCommand(program, outputOf);
  licensesCommands(program, outputOf);
  jobsCommands(program, outputOf);
  reconcileCommand(program, outputOf);
  // Every subcommand shares the override, so usage errors come back as exit code 2.
  const override = (c: Command) => {
    c.exitOverride();
    c.commands.forEach(override);
  };
  override(program);
  return program;
}

/** Runs the CLI and returns its exit code: 0 ok, 1 failed, 2 usage, 78 configuration. */
export async function runCli(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.code === "commander.help") return EXIT.ok;
      return EXIT.usage;
    }
    // Configuration and database errors need their classes, and those their modules: loaded only here.
    const known = err instanceof CliError ? err : (await import("./context.js")).asCliError(err);
    if (known) {
      process.stderr.write(`license-bridge: ${known.message}\n`);
      return known.exitCode;
    }
    process.stderr.write(`license-bridge: ${(err as Error).message ?? String(err)}\n`);
    return EXIT.failed;
  }
}
