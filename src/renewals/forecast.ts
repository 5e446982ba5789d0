import type { Clock } from "../clock.js";
import { addMonths } from "../lifecycle/record.js";
import { licenseTypes } from "../lifecycle/service-changes.js";
import type { Alerts } from "../alerts/alerts.js";
import type { BalanceReader } from "../reseller/balance.js";
import { RENEWAL_MIN_GAP_MS, type Store, type UpcomingRenewal } from "../store/store.js";
import { licensePrice } from "../vocabulary/sandbox-prices.js";
import { DAY_MS } from "./sweep.js";

/**
 * What the renewal sweep will buy in the next `days` days, what it costs, and whether the
 * reseller balance covers it (issue 26, contract section 4: GET /admin/forecast, `forecast`).
 *
 * The sweep's own rule (store.renewals.upcoming, the query the sweep runs): an active licence
 * paid a day or more beyond its upstream term is renewed RENEWAL_LEAD_DAYS before the term ends.
 * A licence paid for several terms ahead is renewed once per term, so within a long window it
 * may be due more than once: each renewal is an item, its `due_at` the moment the sweep would
 * queue it (its term end less the lead days, or now when that is past).
 */

export interface ForecastItem {
  service_id: string;
  ip: string;
  /** The licence type, or the bundle id for a bundle. */
  type: string;
  due_at: string;
  /** null when the price is unknown (a live reseller: see `PriceList`). */
  cost: number | null;
}

export interface Forecast {
  days: number;
  balance: number | null;
  due: ForecastItem[];
  /** null when any item's cost is unknown. */
  total_cost: number | null;
  /** max(0, total_cost - balance); null when either is unknown. */
  shortfall: number | null;
  /** Where the costs come from: "sandbox" (its price table), or null when the bridge has no prices. */
  prices: "sandbox" | null;
}

/** The price of one renewal of a licence (every licence of a bundle, as the renew job buys them), or null when unknown. */
export type PriceList = { source: Forecast["prices"]; renewal(svc: UpcomingRenewal): number | null };

/**
 * reseller-api.md has no call for prices, so the only list the bridge knows is the sandbox's:
 * in sandbox mode it is what the upstream charges; against a live reseller the costs are unknown.
 */
export function priceListFor(sandbox: boolean): PriceList {
  if (!sandbox) return { source: null, renewal: () => null };
  return {
    source: "sandbox",
    // A bundle is renewed licence by licence (lifecycle/renew.ts), each at its own price.
    renewal: (svc) => licenseTypes(svc).reduce((sum, type) => sum + licensePrice(type, svc.months), 0),
  };
}

export interface ForecastDeps {
  store: Pick<Store, "renewals">;
  balance: Pick<BalanceReader, "read">;
  prices: PriceList;
  leadDays: number;
  clock: Clock;
}

/** Money is in the reseller's currency units; sums are rounded to cents so 0.1 + 0.2 reads 0.3. */
const cents = (n: number) => Math.round(n * 100) / 100;

export async function forecastRenewals(deps: ForecastDeps, days: number): Promise<Forecast> {
  const now = deps.clock.now();
  const lead = deps.leadDays * DAY_MS;
  const windowEnd = now + days * DAY_MS;
  const due: ForecastItem[] = [];
  for (const svc of await deps.store.renewals.upcoming(windowEnd + lead)) {
    const cost = deps.prices.renewal(svc);
    // Term by term, as the sweep would find it after each renewal, while the customer has paid for the next.
    for (let term = svc.expires_at; term - lead <= windowEnd && svc.paid_until >= term + RENEWAL_MIN_GAP_MS; term = addMonths(term, svc.months)) {
      due.push({ service_id: svc.service_id, ip: svc.ip, type: svc.bundle ?? svc.type ?? "", due_at: new Date(Math.max(now, term - lead)).toISOString(), cost });
    }
  }
  due.sort((a, b) => a.due_at.localeCompare(b.due_at) || a.service_id.localeCompare(b.service_id));
  const { balance } = await deps.balance.read();
  const total = due.some((d) => d.cost === null) ? null : cents(due.reduce((sum, d) => sum + d.cost!, 0));
  return {
    days,
    balance,
    due,
    total_cost: total,
    shortfall: total === null || balance === null ? null : cents(Math.max(0, total - balance)),
    prices: deps.prices.source,
  };
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
    await alerts.raise(
      SHORTFALL_ALERT_KEY,
      `the reseller balance will not cover the next ${SHORTFALL_ALERT_DAYS} days of renewals`,
      `${f.due.length} renewal(s) are due in the next ${SHORTFALL_ALERT_DAYS} days for ${f.total_cost}; the balance is ${f.balance}, ` +
        `${f.shortfall} short. Top up the reseller balance, or renewals will be blocked (GET /admin/forecast, license-bridge forecast).`,
    );
  } else {
    await alerts.resolve(SHORTFALL_ALERT_KEY);
  }
  return f;
}
