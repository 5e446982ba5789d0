import { ConfigError, loadConfig, type Config } from "../config/load.js";
import { createLogger, type Logger } from "../log/logger.js";
import { CliError, EXIT } from "./output.js";

/** The same configuration the service reads; a bad one ends the command with exit code 78. */
export function configOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return loadConfig({ env });
  } catch (err) {
    if (err instanceof ConfigError) {
      throw new CliError(["configuration error:", ...err.lines.map((l) => `  ${l}`)].join("\n"), EXIT.config);
    }
    throw err;
  }
}

/** Logs to stderr so stdout stays clean for --json. */
export function cliLogger(config: Pick<Config, "LOG_LEVEL">, level?: string): Logger {
  return createLogger({ level: level ?? config.LOG_LEVEL, destination: process.stderr, pretty: process.stderr.isTTY === true });
}
