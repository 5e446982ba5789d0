import type { Config } from "../config/load.js";
import { createLogger, type Logger } from "../log/logger.js";
import type { CliWritable } from "./io.js";

/**
 * Logs to the run's stderr so stdout stays clean for --json. Apart from context.ts so that the
 * commands which log nothing (jobs, licenses, migrate, renew) do not load pino.
 */
export function cliLogger(config: Pick<Config, "LOG_LEVEL">, stderr: CliWritable, level?: string): Logger {
  return createLogger({ level: level ?? config.LOG_LEVEL, destination: stderr, pretty: stderr.isTTY === true });
}
