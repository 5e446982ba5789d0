import type { Router } from "express";
import type { Config } from "../../config/load.js";
import { ConfigError } from "../../config/load.js";
import type { Clock } from "../../jobs/clock.js";
import type { Logger } from "../../log/logger.js";
import type { WebhookObserver } from "../billing-route.js";
import { BLESTA_FIELDS, blestaRouter, type BlestaField } from "./blesta.js";
import { notFoundRouter, type AdapterDeps } from "./common.js";
import { loadFieldMaps, type FieldMap, type FieldMapsResult } from "./field-maps.js";
import { HOSTBILL_FIELDS, hostbillRouter, type HostbillField } from "./hostbill.js";
import { UPMIND_FIELDS, upmindRouter, type UpmindField } from "./upmind.js";

export { BLESTA_FIELDS, HOSTBILL_FIELDS, UPMIND_FIELDS };

/** Every adapter's default field table, as ADAPTER_FIELD_MAPS_FILE overrides them. */
export const DEFAULT_FIELD_MAPS = { hostbill: HOSTBILL_FIELDS, upmind: UPMIND_FIELDS, blesta: BLESTA_FIELDS } as const;

export type AdapterConfig = Pick<
  Config,
  "HOSTBILL_WEBHOOK_SECRET" | "UPMIND_WEBHOOK_SECRET" | "BLESTA_WEBHOOK_TOKEN" | "BLESTA_ALLOWED_IPS" | "ADAPTER_FIELD_MAPS_FILE" | "catalog"
>;

export interface AdapterRoutersDeps {
  accept: AdapterDeps["accept"];
  config: AdapterConfig;
  clock: Clock;
  logger: Logger;
  /** The service store; lets Upmind's "updated" hooks be compared with the stored licence. */
  services?: AdapterDeps["services"];
  observer?: WebhookObserver;
}

/** Validates ADAPTER_FIELD_MAPS_FILE; problems are "ADAPTER_FIELD_MAPS_FILE: ..." lines (for start-up checks). */
export function checkAdapterFieldMaps(config: Pick<Config, "ADAPTER_FIELD_MAPS_FILE">, cwd?: string): FieldMapsResult {
  const r = loadFieldMaps(config.ADAPTER_FIELD_MAPS_FILE, DEFAULT_FIELD_MAPS, cwd);
  return r.ok ? r : { ok: false, problems: r.problems.map((p) => `ADAPTER_FIELD_MAPS_FILE: ${p}`) };
}

/**
 * The HostBill, Upmind and Blesta webhook routes, for the adapters whose secret or token is
 * configured; the route of an unconfigured one answers 404, as any unknown path does. Throws a
 * ConfigError when ADAPTER_FIELD_MAPS_FILE is unreadable or invalid.
 */
export function adapterRouters(deps: AdapterRoutersDeps): Router[] {
  const { config } = deps;
  const maps = checkAdapterFieldMaps(config);
  if (!maps.ok) throw new ConfigError(maps.problems);
  const base: AdapterDeps = {
    accept: deps.accept,
    catalog: config.catalog,
    clock: deps.clock,
    logger: deps.logger.child({ component: "adapters" }),
    services: deps.services,
    observer: deps.observer,
  };
  return [
    config.HOSTBILL_WEBHOOK_SECRET
      ? hostbillRouter(config.HOSTBILL_WEBHOOK_SECRET, base, maps.maps.hostbill as FieldMap<HostbillField>)
      : notFoundRouter("/webhooks/hostbill"),
    config.UPMIND_WEBHOOK_SECRET
      ? upmindRouter(config.UPMIND_WEBHOOK_SECRET, base, maps.maps.upmind as FieldMap<UpmindField>)
      : notFoundRouter("/webhooks/upmind"),
    config.BLESTA_WEBHOOK_TOKEN
      ? blestaRouter(
          { token: config.BLESTA_WEBHOOK_TOKEN, allowedIps: config.BLESTA_ALLOWED_IPS, fields: maps.maps.blesta as FieldMap<BlestaField> },
          base,
        )
      : notFoundRouter("/webhooks/blesta/:token"),
  ];
}
