import type { Clock } from "../clock.js";
import type { ProviderRegistry } from "../providers/registry.js";
import type { ServiceRow } from "../store/store.js";
import type { ProductType } from "../vocabulary/products.js";

/** What of a service its install commands depend on: its IP, its provider and what it bought there. */
export type InstallCommandsOf = Pick<ServiceRow, "ip" | "kind" | "type" | "bundle" | "product_id" | "provider" | "sku">;

export interface LicenseInstallCommand {
  type: ProductType;
  command: string;
}

/**
 * The install command of each licence a service stands for (one for a licence, one per component
 * of a bundle), from the service's provider (the reseller's through its upstream, so within
 * WORKER_CONCURRENCY like every other call). The install mail and the panels' client areas both
 * read them here. Throws what the provider throws; an empty command is an error.
 */
export async function installCommandsOf(providers: Pick<ProviderRegistry, "providerFor">, svc: InstallCommandsOf): Promise<LicenseInstallCommand[]> {
  const provider = providers.providerFor(svc);
  const out: LicenseInstallCommand[] = [];
  for (const { sku, type } of provider.partsOf(svc)) {
    // The product as well: Manage2's and CLN's commands are its catalogue template.
    const command = (await provider.installCommand({ ip: svc.ip, sku }, svc)).trim();
    if (!command) throw new Error(`${provider.label} returned an empty install command for ${type} at ${svc.ip}`);
    out.push({ type, command });
  }
  return out;
}

/**
 * installCommandsOf with a short memory, for pages a customer reloads (a panel's client area):
 * an install command changes only with the licence's IP, provider or product, which are the cache's key.
 */
export function cachedInstallCommands(providers: Pick<ProviderRegistry, "providerFor">, clock: Clock, ttlMs = 5 * 60_000) {
  const cache = new Map<string, { commands: LicenseInstallCommand[]; at: number }>();
  return async (svc: InstallCommandsOf): Promise<LicenseInstallCommand[]> => {
    const key = `${svc.ip}|${svc.provider}|${svc.product_id}|${svc.kind}|${svc.type ?? ""}|${svc.bundle ?? ""}|${svc.sku ?? ""}`;
    const hit = cache.get(key);
    if (hit && clock.now() - hit.at < ttlMs) return hit.commands;
    const commands = await installCommandsOf(providers, svc);
    cache.set(key, { commands, at: clock.now() });
    return commands;
  };
}
