import { ConfigError, loadConfig, type Config } from "../config/load.js";
import { SECRET_KEYS } from "../config/schema.js";
import type { Logger } from "../log/logger.js";
import type { RunningService } from "../compose/service.js";

/** The names of the settings whose values differ (never the values: some are secrets). */
function changedSettings(before: Config, after: Config): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)].filter((k) => !["catalog", "operators", "upstream", "dataDir", "baseDir", "sandbox"].includes(k)));
  const out = [...keys].filter((k) => JSON.stringify((before as unknown as Record<string, unknown>)[k]) !== JSON.stringify((after as unknown as Record<string, unknown>)[k]));
  if (JSON.stringify(before.catalog.productIds().map((id) => [id, before.catalog.product(id)])) !== JSON.stringify(after.catalog.productIds().map((id) => [id, after.catalog.product(id)]))) {
    out.push("catalogue");
  }
  // Names and roles only: which operators came, went or changed role (their token hashes are no one's business in a log).
  if (JSON.stringify(before.operators) !== JSON.stringify(after.operators)) out.push("operators");
  return out.sort();
}

/**
 * SIGHUP: read the configuration again (the environment, ENV_FILE, the settings file, the
 * catalogue) and apply it to the running service. An invalid one is refused with a loud line per
 * problem and the running configuration stays; a signal before the service is up is ignored.
 * `env` is the one the service started with (the process's, which the bin passes), read again.
 */
export function reloadOnHangup(logger: Logger, env: NodeJS.ProcessEnv): { attach(service: RunningService): void; detach(): void } {
  let service: RunningService | undefined;
  const onHangup = () => {
    if (!service) {
      logger.warn("SIGHUP during start-up: ignored; the configuration just read is the one in use");
      return;
    }
    let next: Config;
    try {
      next = loadConfig({ env, cwd: service.config.baseDir });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      logger.error({ problems: err.lines }, "SIGHUP: the new configuration is invalid; the running configuration is kept");
      return;
    }
    const changed = changedSettings(service.config, next);
    let restartNeeded: string[];
    try {
      ({ restartNeeded } = service.reload(next));
    } catch (err) {
      // A file only the rebuild reads (ADAPTER_FIELD_MAPS_FILE) can still be wrong: refused the same way.
      const problems = err instanceof ConfigError ? err.lines : [(err as Error).message];
      logger.error({ problems }, "SIGHUP: the new configuration is invalid; the running configuration is kept");
      return;
    }
    logger.info(
      { changed, secrets_changed: changed.filter((k) => (SECRET_KEYS as readonly string[]).includes(k)) },
      changed.length ? "SIGHUP: configuration reloaded" : "SIGHUP: configuration reloaded, nothing changed",
    );
    if (restartNeeded.length) logger.warn({ settings: restartNeeded }, "SIGHUP: these settings changed but keep their running values until a restart");
  };
  process.on("SIGHUP", onHangup);
  return {
    attach(s) {
      service = s;
    },
    detach() {
      process.off("SIGHUP", onHangup);
    },
  };
}
