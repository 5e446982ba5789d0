import { html, type Html } from "../html.js";
import type { BalanceReading } from "../../reseller/balance.js";
import type { DailyActivity } from "../../store/store.js";
import { ERROR_HINTS, type ErrorCode } from "../../vocabulary/error-codes.js";
import type { Job } from "../../vocabulary/jobs.js";
import { SERVICE_STATUSES } from "../../vocabulary/service-statuses.js";
import { PROVIDER_NAMES, PROVIDER_TITLES } from "../../vocabulary/providers.js";
import type { ConsoleSession } from "../session.js";
import type { AdminFunctions } from "../admin-functions.js";
import { activityChart } from "./chart.js";
import { iso, page, statusBadge } from "./layout.js";

/** The fix the panel modules show for a code, in the console's words (the operator retries the job). */
export function hintFor(code: string | null): string | undefined {
  const hint = code ? ERROR_HINTS[code as ErrorCode] : undefined;
  return hint?.replaceAll("run {action} again", "retry the job").replaceAll("{action}", "the job");
}

export interface OverviewData {
  statuses: Partial<Record<string, number>>;
  stopped: Job[];
  alerts: { key: string; subject: string; opened_at: number; count: number }[];
  balance: BalanceReading;
  daily: DailyActivity[];
  today: number;
  forecast: Awaited<ReturnType<AdminFunctions["forecast"]>>;
  queue: Awaited<ReturnType<AdminFunctions["queueLag"]>>;
}

export function overviewPage(session: ConsoleSession, d: OverviewData): Html {
  const total = Object.values(d.statuses).reduce<number>((n, v) => n + (v ?? 0), 0);
  const balance = d.balance.balance === null ? html`<p class="warn">unknown: ${d.balance.reason ?? "not read yet"}</p>` : html`<p class="big">${d.balance.balance.toFixed(2)}</p>`;
  const { value: f, computed_at: forecastAt } = d.forecast;
  // Each provider's money apart: only the reseller's comes out of the reseller balance.
  const costs = PROVIDER_NAMES.flatMap((p) => (f.by_provider[p] ? [[p, f.by_provider[p]] as const] : []));
  const byProvider = costs.length
    ? html`<table><caption class="muted">by provider</caption><tbody>${costs.map(
        ([p, c]) => html`<tr><th scope="row">${PROVIDER_TITLES[p]}</th><td class="num">${c.renewals}</td><td class="num">${c.cost === null ? "unknown" : c.cost.toFixed(2)}</td></tr>`,
      )}</tbody></table>`
    : "";
  const forecast = html`<section class="card"><h2>Renewals, next ${f.days} days</h2><p class="muted">as of <time datetime="${iso(forecastAt)}">${iso(forecastAt)}</time></p><p class="big">${f.total_cost === null ? "cost unknown" : f.total_cost.toFixed(2)}</p>
        ${byProvider}
        ${f.shortfall === null ? html`<p class="muted">${f.total_cost === null ? `Catalogue product(s) ${f.unpriced_products.join(", ")} have no price_per_month: the cost is unknown.` : "The reseller balance is unknown: nothing to compare the reseller's cost with."}</p>` : f.shortfall > 0 ? html`<p class="bad" role="alert">The reseller balance will not cover the reseller's renewals: ${f.shortfall.toFixed(2)} short.</p>` : html`<p class="ok">The reseller's renewals are covered by its balance.</p>`}</section>`;
  const queue = html`<section class="card"><h2>Queue</h2><p class="big">${d.queue.depth}</p><p class="muted">oldest due job waiting ${d.queue.oldest_due_seconds ?? 0} s</p></section>`;
  return page({
    title: "Overview",
    session,
    section: "overview",
    body: html`<h1>Overview</h1>
      <div class="cards">
        <section class="card"><h2>Licences</h2><p class="big">${total}</p>
          <table><caption class="muted">by status</caption><tbody>${SERVICE_STATUSES.map(
            (s) => html`<tr><th scope="row"><a href="/console/licences?status=${s}">${statusBadge(s)}</a></th><td class="num">${d.statuses[s] ?? 0}</td></tr>`,
          )}</tbody></table></section>
        <section class="card"><h2>Reseller balance</h2>${balance}<p class="muted">read ${iso(d.balance.checkedAt) || "never"}</p></section>
        ${forecast}
        ${queue}
      </div>
      <h2>Orders, renewals and failures per day</h2>
      ${activityChart(d.daily, d.today)}
      <h2>Blocked and failed jobs</h2>
      ${d.stopped.length === 0
        ? html`<p class="ok">None: nothing waits for an operator.</p>`
        : html`<div class="table-wrap"><table><thead><tr><th>Job</th><th>Service</th><th>State</th><th>Reason</th><th>What to do</th></tr></thead><tbody>${d.stopped.map(
            (j) => html`<tr><td><a href="/console/jobs#job-${j.id}">${j.id}</a> ${j.kind}</td>
              <td>${j.serviceId ? html`<a href="/console/licences/${encodeURIComponent(j.serviceId)}">${j.serviceId}</a>` : ""}</td>
              <td>${statusBadge(j.state)}</td><td>${j.lastError}</td><td>${hintFor(j.errorCode) ?? ""}</td></tr>`,
          )}</tbody></table></div>`}
      <h2>Open alerts</h2>
      ${d.alerts.length === 0
        ? html`<p class="ok">None.</p>`
        : html`<ul>${d.alerts.map((a) => html`<li><strong>${a.subject}</strong> <span class="muted">since ${iso(a.opened_at)}, ${a.count}×</span></li>`)}</ul>`}`,
  });
}
