import type { Command } from "commander";
import { CliError } from "../output.js";
import { untilSignal } from "../signals.js";

export function sandboxCommand(program: Command): void {
  program
    .command("sandbox")
    .description("run the reseller API sandbox alone (HOST, SANDBOX_PORT, SANDBOX_TOKEN, ... from the environment)")
    .action(async () => {
      // Imported when the command runs (see buildProgram).
      const [{ createLogger }, { startSandboxFromEnv }] = await Promise.all([import("../../log/logger.js"), import("../../sandbox/main.js")]);
      const logger = createLogger({ level: process.env.LOG_LEVEL || "info" });
      let running;
      try {
        running = await startSandboxFromEnv(process.env, logger);
      } catch (err) {
        throw new CliError((err as Error).message, 78);
      }
      await untilSignal();
      await running.close();
    });
}
