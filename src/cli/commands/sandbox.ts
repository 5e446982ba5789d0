import type { Command } from "commander";
import type { CliContext } from "../io.js";
import { CliError } from "../output.js";
import { untilSignal } from "../signals.js";

/** Runs until the process's SIGTERM or SIGINT: a command for a process of its own, as serve is. */
export function sandboxCommand(program: Command, { io }: CliContext): void {
  program
    .command("sandbox")
    .description("run the reseller API sandbox alone (HOST, SANDBOX_PORT, SANDBOX_TOKEN, ... from the environment)")
    .action(async () => {
      // Imported when the command runs (see buildProgram).
      const [{ createLogger }, { startSandboxFromEnv }] = await Promise.all([import("../../log/logger.js"), import("../../sandbox/main.js")]);
      const logger = createLogger({ level: io.env.LOG_LEVEL || "info", destination: io.stdout, pretty: io.stdout.isTTY === true });
      let running;
      try {
        running = await startSandboxFromEnv(io.env, logger);
      } catch (err) {
        throw new CliError((err as Error).message, 78);
      }
      await untilSignal();
      await running.close();
    });
}
