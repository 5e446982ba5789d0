import type { Clock } from "../clock.js";
import { addMonths } from "../lifecycle/record.js";
import { licenseTypes } from "../lifecycle/service-changes.js";
import type { Alerts } from "../alerts/alerts.js";
import type { BalanceReader } from "../reseller/balance.js";
import type { Catalog } from "../catalog/catalog.js";
import { money, type PriceList as MonthlyPrices } from "../catalog/prices.js";
import type { Store, UpcomingRenewal } from "../store/store.js";
import { renewalDue } from "../intake/renewal-due.js";
import { licensePrice } from "../vocabulary/sandbox-prices.js";
import { DEFAULT_PROVIDER, PROVIDER_NAMES, type ProviderName } from "../vocabulary/provider-names.js";
import { DAY_MS } from "./sweep.js";

/**
 * What the renewal sweep will buy in the next `days` days, what it costs, and whether the
 * reseller balance covers it (issue 26, contract section 4: GET /admin/forecast, `forecast`).
 * A Manage2 or CLN licence's term is bought from no one: its provider bills it each month it is
 * active (issue 36), so its cost is what that provider will take, from its own account. Each
 * provider's cost is said apart, and only the reseller's is held against the reseller balance.
 *
 * The sweep's own rule (`renewalDue`, asked of the candidates store.renewals.upcoming reads): an
 * active licence paid a day or more beyond its upstream term is renewed RENEWAL_LEAD_DAYS before
 * the term ends. A licence paid for several terms ahead is renewed once per term, so within a
 * long window it may be due more than once: each renewal is an item, its `due_at` the moment the
 * sweep would queue it (its term end less the lead days, or now when that is past).
 */

export interface ForecastItem {
  service_id: string;
  /** Who the cost goes to: the reseller (a renewal bought) or Manage2 or CLN (billed while active). */
  provider: ProviderName;
  ip: string;
  /** The licence type, or the bundle id for a bundle. */
  type: string;
  due_at: string;
  /** null when the price is unknown (a live product without `price_per_month`: see `PriceList`). */
  cost: number | null;
}

export interface Forecast {
  days: number;
  balance: number | null;
  due: ForecastItem[];
  /** Every provider's costs together; null when any item's cost is unknown. */
  total_cost: number | null;
  /** max(0, the reseller's cost - balance); null when either is unknown. The other providers bill their own accounts. */
  shortfall: number | null;
  /** Each provider with renewals in the window: how many, and what they cost it (null when any is unknown). */
  by_provider: Partial<Record<ProviderName, ProviderCost>>;
  /** The catalogue products of due renewals that have no `price_per_month`: what makes the cost unknown. */
  unpriced_products: string[];
  /** Where the costs come from: "sandbox" (its price table) or "catalogue" (each product's `price_per_month`). */
  prices: MonthlyPrices["source"];
}

export interface ProviderCost {
  renewals: number;
  cost: number | null;
}

/** The price of one renewal of a licence (every licence of a bundle, as the renew job buys them), or null when unknown. */
export type PriceList = { source: Forecast["prices"]; renewal(svc: UpcomingRenewal): number | null };

/**
 * reseller-api.md has no call for prices. In sandbox mode the reseller sandbox's table is what
 * the reseller charges, and a bundle is renewed licence by licence (lifecycle/renew.ts), each at
 * its own price. On a live bridge the operator's catalogue says what a month of each product costs
 * (`price_per_month`, as the adoption plan prices it): a renewal is that times its months. A
 * Manage2 or CLN product is priced so in both modes: nothing is bought for its term, its provider
 * bills that much each month it is active (`catalog` says whose a product is).
 */
export function renewalPrices(monthly: MonthlyPrices, catalog?: Pick<Catalog, "product">): PriceList {
  const byCatalogue = (svc: UpcomingRenewal): number | null => {
    const perMonth = monthly.product(svc.product_id);
    return perMonth === null ? null : money(perMonth * svc.months);
  };
  // The service's own provider (its row's), else its product's.
  const providerOf = (svc: UpcomingRenewal): string => svc.provider ?? catalog?.product(svc.product_id)?.provider ?? DEFAULT_PROVIDER;
  if (monthly.source === "sandbox") {
    return {
      source: "sandbox",
      // A Manage2 or CLN product bills its price_per_month each month it is active, in sandbox mode as well.
      renewal: (svc) => (providerOf(svc) !== DEFAULT_PROVIDER ? byCatalogue(svc) : licenseTypes(svc).reduce((sum, type) => sum + licensePrice(type, svc.months), 0)),
    };
  }
  return { source: monthly.source, renewal: byCatalogue };
}

export interface ForecastDeps {
  store: Pick<Store, "renewals">;
  balance: Pick<BalanceReader, "read">;
  prices: PriceList;
  leadDays: number;
  clock: Clock;
}

export async function forecastRenewals(deps: ForecastDeps, days: number): Promise<Forecast> {
  const now = deps.clock.now();
  const lead = deps.leadDays * DAY_MS;
  const windowEnd = now + days * DAY_MS;
  const due: ForecastItem[] = [];
  const unpriced = new Set<string>();
  for (const svc of await deps.store.renewals.upcoming(windowEnd + lead)) {
    const terms = termsDue(svc, windowEnd, lead);
    if (terms.length === 0) continue;
    const cost = deps.prices.renewal(svc);
    if (cost === null) unpriced.add(svc.product_id);
    const provider = svc.provider ?? DEFAULT_PROVIDER;
    for (const term of terms) {
      due.push({ service_id: svc.service_id, provider, ip: svc.ip, type: svc.bundle ?? svc.type ?? "", due_at: new Date(Math.max(now, term - lead)).toISOString(), cost });
    }
  }
  due.sort((a, b) => a.due_at.localeCompare(b.due_at) || a.service_id.localeCompare(b.service_id));
  const { balance } = await deps.balance.read();
  const total = costOf(due);
  // The reseller's renewals are paid from the reseller balance; Manage2 and CLN invoice their own accounts.
  const reseller = costOf(due.filter((d) => d.provider === DEFAULT_PROVIDER));
  return {
    days,
    balance,
    due,
    total_cost: total,
    shortfall: reseller === null || balance === null ? null : money(Math.max(0, reseller - balance)),
    by_provider: byProvider(due),
    unpriced_products: [...unpriced].sort(),
    prices: deps.prices.source,
  };
}

/** What `items` cost together; null when any one's cost is unknown. */
function costOf(items: readonly ForecastItem[]): number | null {
  return items.some((d) => d.cost === null) ? null : money(items.reduce((sum, d) => sum + d.cost!, 0));
}

/** Each provider's renewals and their cost, in the order of PROVIDER_NAMES; a provider with none is left out. */
function byProvider(due: readonly ForecastItem[]): Forecast["by_provider"] {
  const out: Forecast["by_provider"] = {};
  for (const provider of PROVIDER_NAMES) {
    const mine = due.filter((d) => d.provider === provider);
    if (mine.length) out[provider] = { renewals: mine.length, cost: costOf(mine) };
  }
  return out;
}

/**
 * The terms the sweep will renew by `until`, asked term by term as the sweep would find the
 * licence after each renewal (its term a cycle on, paid-until unchanged): until one is not due.
 */
function termsDue(svc: UpcomingRenewal, until: number, leadMs: number): number[] {
  const terms: number[] = [];
  for (let next = svc; ; next = { ...next, expires_at: addMonths(next.expires_at, next.months) }) {
    const due = renewalDue(next, { now: until, leadMs });
    if (!due.due) return terms;
    terms.push(due.term);
  }
}

/** The alert's key: one episode while the balance does not cover the coming week. */
export const SHORTFALL_ALERT_KEY = "balance:forecast-shortfall";
/** The window the alert looks at. */
export const SHORTFALL_ALERT_DAYS = 7;

/**
 * Raises the alert when the balance will not cover the renewals of the next 7 days, and closes
 * it once it does. Unknown (no balance, no prices): nothing either way, since nothing is known.
 */
export async function checkForecastShortfall(deps: ForecastDeps, alerts: Pick<Alerts, "raise" | "resolve">): Promise<Forecast> {
  const f = await forecastRenewals(deps, SHORTFALL_ALERT_DAYS);
  if (f.shortfall === null) return f;
  if (f.shortfall > 0) {
    const reseller = f.by_provider.reseller;
    await alerts.raise(
      SHORTFALL_ALERT_KEY,
      `the reseller balance will not cover the next ${SHORTFALL_ALERT_DAYS} days of renewals`,
      `${reseller?.renewals ?? 0} renewal(s) at the reseller are due in the next ${SHORTFALL_ALERT_DAYS} days for ${reseller?.cost ?? 0}; the balance is ${f.balance}, ` +
        `${f.shortfall} short. Top up the reseller balance, or renewals will be blocked (GET /admin/forecast, license-bridge forecast).`,
    );
  } else {
    await alerts.resolve(SHORTFALL_ALERT_KEY);
  }
  return f;
}
