import type { BillingCycleMonths, ProductType } from "../vocabulary/products.js";

/**
 * The provider port (issue 36): what the lifecycle asks of whoever sells a licence, one adapter
 * per distributor, each declaring what it can do (Bull Board's BaseAdapter: capability flags
 * instead of throws). The deciding core, the job protocol (`callOnce`, intents, the settle
 * window) and the charging rule stay on this side of it and never learn a provider's status
 * strings, error classes, bundles or LiteSpeed cores.
 *
 * Expected outcomes are values ("already held", "not held"); failures are the upstream error
 * hierarchy of src/reseller/errors.ts (`mayHaveTakenEffect`, `disposition`), shared by every
 * provider's client.
 */

// One list of names, on the ground floor, so the store and the admin filters can name providers too.
export { PROVIDER_NAMES, type ProviderName } from "../vocabulary/provider-names.js";
import type { ProviderName } from "../vocabulary/provider-names.js";

/** What a provider can do, and so which path the lifecycle takes with it. One definition for every provider. */
export interface ProviderCapabilities {
  /** `purchase`: a renewal buys a term (the reseller). `billed-while-active`: nothing to buy, the provider bills each month the licence is active (Manage2, CLN). */
  readonly renewal: "purchase" | "billed-while-active";
  /** `native`: suspend and unsuspend calls (the reseller). `by-expiry`: expire, then reactivate the same licence (Manage2). `by-removal`: remove, then register again (CLN). */
  readonly suspension: "native" | "by-expiry" | "by-removal";
  /** Whether bringing a suspended licence back may bill (Manage2's reactivation fee, CLN's register): then it passes the charging rule. */
  readonly unsuspendBills: boolean;
  /** `atomic`: one call moves the licence (the reseller's change-ip, Manage2's XMLtransfer). `register-then-remove`: the new IP's licence first, the old one removed after (CLN). */
  readonly changeIp: "atomic" | "register-then-remove";
  /**
   * `litespeed-core`: a LiteSpeed licence moves between core variants in place, nothing else
   * (the reseller). `package-update`: XMLpackageUpdate, which Manage2 may refuse (then the
   * operator acts). `convert-or-register-then-remove`: CLN's conversion where it has one, else
   * the new type registered before the old one is removed.
   */
  readonly changeProduct: "litespeed-core" | "package-update" | "convert-or-register-then-remove";
  /** What the provider's licence list shows of each licence: a status, an expiry. */
  readonly list: { readonly status: boolean; readonly expiry: boolean };
  /** Sells several licences as one product in one call (the reseller's bundles). */
  readonly bundles: boolean;
  /** A purchase sent again answers the licence already there instead of buying a second (CLN's register). */
  readonly acquireIsIdempotent: boolean;
}

/**
 * A product as the bridge names it (a catalogue entry, or the service row made of one): a
 * licence of a type (and variant), or a bundle by its id. The provider reads what it sells
 * out of it.
 */
export interface ProductRef {
  kind: "licence" | "bundle";
  type?: string | null;
  bundle?: string | null;
  variant?: string | null;
  /** What the provider sells, as the service row keeps it: Manage2's package id, CLN's type number (null for the reseller, whose type or bundle it is). */
  sku?: string | null;
  /** The catalogue product, for what else a provider reads of it (Manage2's group, an install command's template). */
  product_id?: string;
}

/**
 * One licence a product consists of at one IP: what the provider sells (`sku`: the reseller's
 * type, Manage2's package, CLN's type number) and what the customer gets (`type`, the name
 * people see). A reseller bundle has a part per component; every other product has one.
 */
export interface Part {
  sku: string;
  type: ProductType;
}

/** A part as a provider holds it at an IP (`upstreamId`: its own id of the licence, where it has one). */
export interface HeldPart {
  ip: string;
  sku: string;
  upstreamId?: string;
}

/** How a provider holds a licence, in the bridge's words. `other`: a state the bridge does not take as active (the operator decides). */
export type HoldingState = "active" | "suspended" | "expired" | "other";

/** A licence as the provider holds it, its wire status mapped to `state` by the adapter. */
export interface Holding {
  provider: ProviderName;
  ip: string;
  sku: string;
  /** The product type people see (the reseller's list names it as its SKU). */
  type: string;
  state: HoldingState;
  /** The state in the provider's own words, for messages. */
  stateText?: string;
  /** The term's end, where the list shows one. */
  expiresAt?: number;
  /** The variant it is held as, for a product whose variants the provider changes in place (a LiteSpeed licence's cores). */
  variant?: string;
  /** How it is held, in words for the service's history ("variant litespeed8"). */
  detail?: string;
  upstreamId?: string;
  /** The key of the bundle it was bought in, as the provider lists it. */
  bundleKey?: string;
  /** The intent a purchase carried upstream (Manage2's `external_notes`), where the provider keeps one. */
  intentTag?: string;
  /** Came free with another licence (the reseller's cPanel companions); never bought on its own. */
  free?: boolean;
}

/** What a purchase made, as far as the provider's answer says. */
export interface Bought {
  expiresAt?: number;
  bundleKey?: string;
  upstreamId?: string;
}

/**
 * A purchase's outcome: bought, or refused because the provider already holds the licence
 * (bought outside the bridge, or kept from a terminated service): then its holdings decide.
 */
export type Purchase = { bought: Bought } | { alreadyHeld: true };

export const ALREADY_HELD: Purchase = { alreadyHeld: true };
export const isAlreadyHeld = (value: unknown): boolean => typeof value === "object" && value !== null && (value as { alreadyHeld?: unknown }).alreadyHeld === true;

/**
 * A suspension, unsuspension or termination: done, or refused because the provider holds no
 * such licence. The refusal is kept, for a caller to throw where "not held" means nothing better.
 * `unfinished` (an unsuspension only): the licence is back, and billed, but a step after that
 * failed (Manage2's move to the IP or package the service took while it was suspended); asking
 * to unsuspend again bills nothing and does the rest.
 */
export type StatusOutcome = { done: true; unfinished?: Error } | { done: false; notHeld: Error };

/** For a call that may bill. */
export interface PurchaseOptions {
  /**
   * Runs once the call holds its upstream slot, right before the request is sent; a throw stops
   * the call unsent (the fence of a job that may have lost its lease while it waited).
   */
  beforeSend?: () => Promise<void>;
  /** The job's intent, for a provider that keeps it with the licence (Manage2's `external_notes`). */
  intent?: string;
}

/** What a caller asks about the licences at an IP. */
export interface HoldingsQuery {
  /**
   * Only the licences of these SKUs are asked about, and only they are answered. Every
   * lifecycle caller names the SKUs it looks at: Manage2 lists expired licences for the whole
   * account or by package, never by IP, and a partner's expired history grows for years.
   * (Default: every licence at the IP)
   */
  skus?: readonly string[];
}

/** The holdings a query asks about, for a provider whose read at an IP is not narrowed by it. */
export const askedAbout = (holdings: Holding[], query: HoldingsQuery = {}): Holding[] =>
  query.skus === undefined ? holdings : holdings.filter((h) => query.skus!.includes(h.sku));

export interface LicenceProvider {
  readonly name: ProviderName;
  /** How messages and the service's history name it ("the reseller"). */
  readonly label: string;
  readonly capabilities: ProviderCapabilities;

  /** The licences a product consists of. */
  partsOf(product: ProductRef): Part[];
  /** The free licences that come with a product and follow it (recorded on the service, never bought). */
  companionsOf(product: ProductRef): string[];
  /**
   * For a product whose variants the provider changes in place: the variant a new purchase is
   * held as (the reseller registers every LiteSpeed licence as plain `litespeed`, its cores set
   * after); undefined for any other product.
   */
  registeredVariant(product: ProductRef): string | undefined;
  /** The variant a product is to be held as, for a product of that kind; undefined for any other. */
  variantOf(product: ProductRef): string | undefined;

  /** Buys the whole product at `ip` (a bundle in one call, where the provider sells it so). */
  buy(ip: string, product: ProductRef, months: BillingCycleMonths, options?: PurchaseOptions): Promise<Purchase>;
  /** After a lost answer to `buy`: what the purchase left at `ip`, or undefined when nothing shows it happened. */
  findPurchase(ip: string, product: ProductRef, options?: { intent?: string }): Promise<Holding[] | undefined>;
  /** Buys one part on its own (a bundle's component the IP lacks). */
  buyPart(ip: string, part: Part, months: BillingCycleMonths, options?: PurchaseOptions): Promise<Purchase>;
  /** Every licence the provider holds at `ip` (of the SKUs `query` names, where it names some), free ones marked. */
  holdingsAt(ip: string, query?: HoldingsQuery): Promise<Holding[]>;
  /** Every licence the provider holds. */
  list(): Promise<Holding[]>;

  /** One more term of a part; only where `renewal` is `purchase`. */
  renew(held: HeldPart, months: BillingCycleMonths, options?: PurchaseOptions): Promise<{ expiresAt?: number }>;
  suspend(held: HeldPart): Promise<StatusOutcome>;
  /** Brings a suspended licence back (`options`: for a provider where that may bill, `unsuspendBills`). */
  unsuspend(held: HeldPart, options?: PurchaseOptions): Promise<StatusOutcome>;
  /** Ends the licence for good (the reseller suspends it and never renews it). */
  terminate(held: HeldPart): Promise<StatusOutcome>;
  changeIp(held: HeldPart, newIp: string): Promise<void>;
  /** Moves the licence at `ip` from one variant to another in place. */
  changeVariant(ip: string, from: string, to: string): Promise<void>;
  /**
   * Moves the licence at `held.ip` to another of the provider's products in place (Manage2's
   * package update, CLN's conversion); only where `changesProductInPlace` says it can. A refusal
   * is a JobBlockedError carrying the provider's reason: nothing was bought or changed.
   */
  changeProduct(held: HeldPart, to: Part): Promise<void>;
  /**
   * Whether a licence of `fromSku` becomes one of `toSku` in place (`changeProduct`); else it
   * takes a purchase of the new one and the removal of the old (`changeProduct` capability).
   */
  changesProductInPlace(fromSku: string, toSku: string): boolean;
  /** The command that installs the licence on the customer's server (`product`: the catalogue product it was bought as, where the provider reads its template). */
  installCommand(held: HeldPart, product?: ProductRef): Promise<string>;

  /** At shutdown: calls not yet started fail with JobInterruptedError (their jobs go back to the queue). */
  stopCalls(): void;
}
