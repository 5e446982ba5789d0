import { concurrencyLimit } from "../reseller/limit.js";
import type { LicenceProvider } from "./port.js";

/** The port's operations that reach the provider, each run within the limit. */
const CALLS = [
  "buy",
  "findPurchase",
  "buyPart",
  "holdingsAt",
  "list",
  "renew",
  "suspend",
  "unsuspend",
  "terminate",
  "changeIp",
  "changeVariant",
  "changeProduct",
  "installCommand",
] as const satisfies readonly (keyof LicenceProvider)[];

/**
 * At most `max` of the provider's operations at once (WORKER_CONCURRENCY: the runner runs twice
 * as many jobs, so a job busy with local work never leaves a slot idle), as the reseller's
 * Upstream limits its calls. An operation holds one slot for every request it makes, so none
 * waits on a slot its own caller holds; `beforeSend` runs inside it (the fence of a job that may
 * have lost its lease while it waited). `stopCalls` fails the operations still waiting with
 * JobInterruptedError, so their jobs go back to the queue at shutdown.
 */
export function withCallLimit(provider: LicenceProvider, max: number): LicenceProvider {
  const limit = concurrencyLimit(max);
  const limited: Record<string, unknown> = { ...provider };
  for (const name of CALLS) {
    const call = provider[name] as (...args: unknown[]) => Promise<unknown>;
    limited[name] = (...args: unknown[]) => limit(() => call(...args));
  }
  limited.stopCalls = () => {
    limit.close();
    provider.stopCalls();
  };
  return limited as unknown as LicenceProvider;
}
