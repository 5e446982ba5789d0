import type { Catalog } from "../catalog/catalog.js";
import type { Config } from "../config/load.js";
import { createClnProvider, type ClnClient } from "../providers/cln/index.js";
import { withCallLimit } from "../providers/limit.js";
import { createManage2Provider, type Manage2Client } from "../providers/manage2/index.js";
import { createProviderRegistry, type ProviderRegistry } from "../providers/registry.js";
import { createResellerProvider } from "../providers/reseller/index.js";
import type { Upstream } from "../reseller/upstream.js";

/** The clients of the configured providers (null: not configured). */
export interface ProviderClients {
  upstream: Upstream | null;
  manage2: Manage2Client | null;
  cln: ClnClient | null;
}

/**
 * Every configured provider behind the port: the reseller over its upstream, Manage2 and CLN
 * over their clients, each with WORKER_CONCURRENCY calls in flight of its own (a slow provider
 * does not hold up another's jobs). They read the catalogue of the moment (a reload's). The
 * service builds them over its connections, the CLI's reconcile and adopt over clients of its own.
 */
export function providerRegistry(config: Config, clients: ProviderClients, catalog: () => Catalog): ProviderRegistry {
  const groupId = config.providers.manage2?.groupId ?? undefined;
  return createProviderRegistry({
    ...(clients.upstream ? { reseller: createResellerProvider(clients.upstream) } : {}),
    ...(clients.manage2
      ? { manage2: withCallLimit(createManage2Provider(clients.manage2, { catalog, ...(groupId === undefined ? {} : { groupId }) }), config.WORKER_CONCURRENCY) }
      : {}),
    ...(clients.cln ? { cln: withCallLimit(createClnProvider(clients.cln, { catalog }), config.WORKER_CONCURRENCY) } : {}),
  });
}
