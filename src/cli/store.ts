import { existsSync } from "node:fs";
import { systemClock } from "../clock.js";
import type { Config } from "../config/load.js";
import { openStore } from "../store/open.js";
import type { Store } from "../store/store.js";
import type { CliIo } from "./io.js";
import { CliError } from "./output.js";

/**
 * Opens the service's store beside a running service (SQLite in WAL mode, or the shared
 * PostgreSQL), refusing a missing database or one at another migration than the code: the CLI
 * reads and repairs, `license-bridge migrate` alone changes the schema.
 */
export async function withBridgeStore<T>(config: Config, io: Pick<CliIo, "stderr">, fn: (store: Store) => T | Promise<T>): Promise<T> {
  if (!config.DATABASE_URL && config.DATABASE_PATH !== ":memory:" && !existsSync(config.DATABASE_PATH)) {
    throw new CliError(`no database at ${config.DATABASE_PATH}: start the service (npm start) or run \`license-bridge migrate\``);
  }
  // Only PostgreSQL logs here (a lost connection): SQLite reads load no logger, and start faster.
  const logger = config.DATABASE_URL ? (await import("./logger.js")).cliLogger(config, io.stderr, "warn") : undefined;
  const store = await openStore(config, { clock: systemClock, logger, migrate: false });
  try {
    const status = await store.migrationStatus();
    if (status.databaseVersion !== status.codeVersion) {
      throw new CliError(`the database is at migration ${status.databaseVersion}, the code at ${status.codeVersion}: run \`license-bridge migrate\` first`);
    }
    return await fn(store);
  } finally {
    await store.close();
  }
}
