import type { Holding, LicenceProvider, ProviderCapabilities } from "../providers/port.js";
import type { ProviderRegistry } from "../providers/registry.js";
import type { ListedLicense } from "../reseller/answers.js";
import { ResellerError } from "../reseller/errors.js";
import type { Upstream } from "../reseller/upstream.js";
import { canonicalIp } from "../vocabulary/ip-address.js";
import { DEFAULT_PROVIDER, PROVIDER_NAMES, type ProviderName } from "../vocabulary/provider-names.js";
import { PROVIDER_TITLES } from "../vocabulary/providers.js";

/**
 * Each configured provider's licence list, as reconcile and the adoption plan read it (issue 36):
 * the reseller's `/license/list` as before, Manage2's XMLlicenseInfo (active and expired) and
 * CLN's `list`, every licence in the reseller list's words so one matching serves them all.
 */

/**
 * A licence of a provider's list. The reseller's items are kept as its list gives them (no
 * provider, `type` is what it sells: a book of 100,000 carries nothing more); another provider's
 * name it, with what it sells there (`sku`: Manage2's package id, CLN's type number) and, where
 * it has one, its own id of the licence.
 */
export interface Listed extends ListedLicense {
  provider?: Exclude<ProviderName, "reseller">;
  sku?: string;
  upstream_id?: string;
}

/** Whose licence it is. */
export const providerOfListed = (l: Listed): ProviderName => l.provider ?? DEFAULT_PROVIDER;
/** What the provider sells as it: the reseller's type, else the SKU. */
export const skuOfListed = (l: Listed): string => l.sku ?? l.type;

/** How a provider's list is to be read: what it shows of a licence, and what an absent one means. */
export interface ListSource {
  provider: ProviderName;
  /** How texts name it ("cPanel Manage2"). */
  label: string;
  /** What the list shows of each licence (the provider's `list` capability). */
  shows: { status: boolean; expiry: boolean };
  /**
   * How the provider suspends (its `suspension` capability): `by-removal` (CLN) leaves a
   * suspended service's licence absent, and a licence listed is one held and billed, in force;
   * `by-expiry` (Manage2) leaves it expired.
   */
  suspension: ProviderCapabilities["suspension"];
  /** `billed-while-active`: its terms are bought from no one, so its list's licences have no term of their own to read. */
  renewal: ProviderCapabilities["renewal"];
}

/** The reseller's list as it has always been read. */
export const RESELLER_SOURCE: ListSource = { provider: "reseller", label: PROVIDER_TITLES.reseller, shows: { status: true, expiry: true }, suspension: "native", renewal: "purchase" };

/** A list that could not be read: which provider's, and why. */
export class LicenceListError extends Error {
  readonly source: ListSource;
  constructor(source: ListSource, cause: unknown) {
    super(`cannot read ${source.label}'s licence list: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "LicenceListError";
    this.source = source;
  }
}

/** One provider's list, to read. */
export interface LicenceList {
  source: ListSource;
  read(): Promise<Listed[]>;
}

/** Where reconcile and adoption read the lists: the reseller's Upstream (its list streamed compact), the other providers through the port. */
export interface ListSources {
  /** The reseller's; null or absent when there is none (then the registry's reseller, if it has one). */
  upstream?: Upstream | null;
  /** Every configured provider; without it, the reseller's list alone. */
  providers?: Pick<ProviderRegistry, "names" | "get">;
}

export function sourceOf(provider: LicenceProvider): ListSource {
  const { list, suspension, renewal } = provider.capabilities;
  return { provider: provider.name, label: provider.label, shows: list, suspension, renewal };
}

/** The lists of every configured provider, in PROVIDER_NAMES order. */
export function licenceLists(sources: ListSources): LicenceList[] {
  const out: LicenceList[] = [];
  for (const name of PROVIDER_NAMES) {
    if (name === DEFAULT_PROVIDER && sources.upstream) {
      const upstream = sources.upstream;
      out.push({ source: RESELLER_SOURCE, read: () => upstream.listLicenses() });
      continue;
    }
    const provider = sources.providers?.names.includes(name) ? sources.providers.get(name) : undefined;
    if (!provider) continue;
    const source = sourceOf(provider);
    out.push({ source, read: async () => (await provider.list()).map((h) => listedOf(h, source)) });
  }
  return out;
}

/** Every list read at once; the first that cannot be read fails the whole, naming its provider (a partial comparison would report the rest as missing). */
export async function readLists(lists: readonly LicenceList[]): Promise<{ licenses: Listed[]; sources: Map<ProviderName, ListSource> }> {
  const read = await Promise.all(
    lists.map(async (list) => {
      try {
        return await list.read();
      } catch (err) {
        if (err instanceof ResellerError) throw new LicenceListError(list.source, err);
        throw err;
      }
    }),
  );
  const sources = new Map(lists.map((l) => [l.source.provider, l.source]));
  // One list after another, without spreading a book of 100,000 into arguments.
  const licenses: Listed[] = [];
  for (const part of read) for (const l of part) licenses.push(l);
  return { licenses, sources };
}

/**
 * A holding of a provider's list in the list's words: a status only where the provider's list
 * shows one (Manage2: active, expired, suspended by cPanel), or where being listed is itself
 * being in force (CLN lists what the account holds, and a suspended licence is removed); an
 * expiry only where the list shows one.
 */
function listedOf(h: Holding, source: ListSource): Listed {
  if (h.provider === DEFAULT_PROVIDER) return resellerListed(h);
  const l: Listed = { provider: h.provider as Exclude<ProviderName, "reseller">, sku: h.sku, ip: canonicalIp(h.ip) ?? h.ip, type: h.type };
  if (source.shows.status) l.status = h.state === "other" ? (h.stateText ?? "other") : h.state;
  else if (source.suspension === "by-removal") l.status = "active";
  if (source.shows.expiry && h.expiresAt !== undefined) l.expires_at = new Date(h.expiresAt).toISOString();
  if (h.upstreamId !== undefined) l.upstream_id = h.upstreamId;
  return l;
}

/** The reseller's holding back in its list's words (a registry's reseller, where no Upstream was given). */
function resellerListed(h: Holding): Listed {
  const l: Listed = { ip: canonicalIp(h.ip) ?? h.ip, type: h.sku };
  if (h.stateText !== undefined) l.status = h.stateText;
  if (h.expiresAt !== undefined) l.expires_at = new Date(h.expiresAt).toISOString();
  if (h.variant !== undefined) l.variant = h.variant;
  if (h.bundleKey !== undefined) l.bundle_key = h.bundleKey;
  if (h.free !== undefined) l.free = h.free;
  return l;
}
