import { ConfigError, databasePathProblem, loadConfig, type Config } from "../config/load.js";
import { DatabaseOpenError } from "../store/store.js";
import type { CliIo } from "./io.js";
import { CliError, EXIT } from "./output.js";

/** The same configuration the service reads, from the run's environment and directory; a bad one ends the command with exit code 78. */
export function configOrExit(io: Pick<CliIo, "env" | "cwd">): Config {
  try {
    return loadConfig({ env: io.env, cwd: io.cwd });
  } catch (err) {
    if (err instanceof ConfigError) throw configCliError(err);
    throw err;
  }
}

/** A configuration problem as the CLI reports it: a heading, one line per problem, exit code 78. */
export function configCliError(err: ConfigError): CliError {
  return new CliError(["configuration error:", ...err.lines.map((l) => `  ${l}`)].join("\n"), EXIT.config);
}

/**
 * The CLI's error for a failure of any command: configuration problems found late (a database
 * that cannot be opened at DATABASE_PATH) exit 78 like those found while loading.
 */
export function asCliError(err: unknown): CliError | undefined {
  if (err instanceof CliError) return err;
  if (err instanceof ConfigError) return configCliError(err);
  if (err instanceof DatabaseOpenError) return configCliError(databasePathProblem(err));
  return undefined;
}
