import type { Router } from "express";
import type { Config } from "../../config/load.js";
import { ConfigError } from "../../config/load.js";
import { notFoundRouter, webhookRouter, type WebhookRouteDeps } from "../route.js";
import { BLESTA_FIELDS, blestaSource, type BlestaField } from "./blesta.js";
import { loadFieldMaps, type FieldMap, type FieldMapsResult } from "./field-maps.js";
import { HOSTBILL_FIELDS, hostbillSource, type HostbillField } from "./hostbill.js";
import { UPMIND_FIELDS, upmindSource, type UpmindField } from "./upmind.js";

export { BLESTA_FIELDS, HOSTBILL_FIELDS, UPMIND_FIELDS };

/** Every adapter's default field table, as ADAPTER_FIELD_MAPS_FILE overrides them. */
export const DEFAULT_FIELD_MAPS = { hostbill: HOSTBILL_FIELDS, upmind: UPMIND_FIELDS, blesta: BLESTA_FIELDS } as const;

export type AdapterConfig = Pick<
  Config,
  | "HOSTBILL_WEBHOOK_SECRET"
  | "UPMIND_WEBHOOK_SECRET"
  | "BLESTA_WEBHOOK_TOKEN"
  | "BLESTA_ALLOWED_IPS"
  | "BLESTA_API_URL"
  | "BLESTA_API_USER"
  | "BLESTA_API_KEY"
  | "HOSTBILL_API_URL"
  | "HOSTBILL_API_ID"
  | "HOSTBILL_API_KEY"
  | "ADAPTER_FIELD_MAPS_FILE"
  | "catalog"
>;

/** Validates ADAPTER_FIELD_MAPS_FILE; problems are "ADAPTER_FIELD_MAPS_FILE: ..." lines (for start-up checks). */
export function checkAdapterFieldMaps(config: Pick<Config, "ADAPTER_FIELD_MAPS_FILE">, cwd?: string): FieldMapsResult {
  const r = loadFieldMaps(config.ADAPTER_FIELD_MAPS_FILE, DEFAULT_FIELD_MAPS, cwd);
  return r.ok ? r : { ok: false, problems: r.problems.map((p) => `ADAPTER_FIELD_MAPS_FILE: ${p}`) };
}

/**
 * The HostBill, Upmind and Blesta webhook routes, for the adapters whose secret or token is
 * configured; the route of an unconfigured one answers 404, as any unknown path does. Each is
 * the one webhook route (route.ts) with the panel's own authenticate/translate step. Throws a
 * ConfigError when ADAPTER_FIELD_MAPS_FILE is unreadable or invalid.
 */
export function adapterRouters(config: AdapterConfig, deps: Omit<WebhookRouteDeps, "catalog">): Router[] {
  const maps = checkAdapterFieldMaps(config);
  if (!maps.ok) throw new ConfigError(maps.problems);
  const route = { ...deps, catalog: config.catalog, logger: deps.logger.child({ component: "adapters" }) };
  return [
    config.HOSTBILL_WEBHOOK_SECRET
      ? webhookRouter(
          hostbillSource({
            secret: config.HOSTBILL_WEBHOOK_SECRET,
            fields: maps.maps.hostbill as FieldMap<HostbillField>,
            api: config.HOSTBILL_API_URL ? { url: config.HOSTBILL_API_URL, id: config.HOSTBILL_API_ID!, key: config.HOSTBILL_API_KEY! } : undefined,
          }),
          route,
        )
      : notFoundRouter("/webhooks/hostbill"),
    config.UPMIND_WEBHOOK_SECRET
      ? webhookRouter(upmindSource(config.UPMIND_WEBHOOK_SECRET, maps.maps.upmind as FieldMap<UpmindField>), route)
      : notFoundRouter("/webhooks/upmind"),
    config.BLESTA_WEBHOOK_TOKEN
      ? webhookRouter(
          blestaSource({
            token: config.BLESTA_WEBHOOK_TOKEN,
            allowedIps: config.BLESTA_ALLOWED_IPS,
            fields: maps.maps.blesta as FieldMap<BlestaField>,
            api: config.BLESTA_API_URL ? { url: config.BLESTA_API_URL, user: config.BLESTA_API_USER!, key: config.BLESTA_API_KEY! } : undefined,
          }),
          route,
        )
      : notFoundRouter("/webhooks/blesta/:token"),
  ];
}
