import { JobBlockedError } from "../jobs/errors.js";
import type { Upstream } from "../reseller/upstream.js";
import type { LicenceProvider, ProviderName } from "./port.js";
import { createResellerProvider } from "./reseller/provider.js";

/**
 * What names a provider: a catalogue product, or the service row made of one, by its
 * `provider` where it has one; without one, the reseller's.
 */
export type ProviderRouted = object & { provider?: string | null };

/** The configured providers by name, and which one a service or product buys from. */
export interface ProviderRegistry {
  /** The configured providers' names. */
  readonly names: readonly ProviderName[];
  get(name: ProviderName): LicenceProvider | undefined;
  /**
   * The provider a service's licences come from (or a product's are bought from). One the
   * configuration lacks blocks the job, naming it: start-up refuses a catalogue that names one,
   * so only a configuration changed under a queued job meets this.
   */
  providerFor(item: ProviderRouted): LicenceProvider;
  /** At shutdown, every provider's calls not yet started. */
  stopCalls(): void;
}

/** The name a service or product buys from: its own, else the reseller (every product until the catalogue names others). */
export const providerNameOf = (item: ProviderRouted): string => item.provider ?? "reseller";

export function createProviderRegistry(providers: Partial<Record<ProviderName, LicenceProvider>>): ProviderRegistry {
  const byName = new Map(Object.entries(providers).filter((e): e is [ProviderName, LicenceProvider] => e[1] !== undefined));
  return {
    names: [...byName.keys()],
    get: (name) => byName.get(name),
    providerFor(item) {
      const name = providerNameOf(item);
      const provider = byName.get(name as ProviderName);
      if (!provider) throw new JobBlockedError(`the licences of this service come from provider "${name}", which is not configured; configure it, then retry this job`);
      return provider;
    },
    stopCalls() {
      for (const provider of byName.values()) provider.stopCalls();
    },
  };
}

/** The registry of the reseller alone, over its upstream: today's configuration. */
export const resellerRegistry = (upstream: Upstream): ProviderRegistry => createProviderRegistry({ reseller: createResellerProvider(upstream) });
