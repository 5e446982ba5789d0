import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Config } from "../config/load.js";
import { defaultTemplatesDir } from "../mail/index.js";

/** Every file and directory the configuration names, absolute, for the start-up log. */
export function configPaths(config: Config, env: NodeJS.ProcessEnv): Record<string, string> {
  const settings = resolve(config.baseDir, env.CONFIG_FILE?.trim() || "config/license-bridge.json");
  return {
    ...(config.DATABASE_URL ? {} : { database: config.DATABASE_PATH }),
    catalogue: config.PRODUCTS_FILE,
    mail_templates: defaultTemplatesDir(config.baseDir),
    ...(config.SMTP_URL ? {} : { mail_outbox: join(config.dataDir, "outbox") }),
    settings_file: existsSync(settings) ? settings : `${settings} (none)`,
    ...(config.ADAPTER_FIELD_MAPS_FILE ? { adapter_field_maps: resolve(config.baseDir, config.ADAPTER_FIELD_MAPS_FILE) } : {}),
  };
}
