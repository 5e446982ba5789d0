import { html, raw, type Html } from "../html.js";
import type { DailyActivity } from "../../store/store.js";

const DAY_MS = 86_400_000;

/**
 * Orders, renewals and stopped jobs per day over `days` days ending today, as server-drawn SVG:
 * three bars a day, no script. Colours come from the stylesheet (no inline style under the CSP).
 */
export function activityChart(rows: DailyActivity[], today: number, days = 30): Html {
  const byDay = new Map(rows.map((r) => [r.day, r]));
  const series = Array.from({ length: days }, (_, i) => byDay.get(today - days + 1 + i) ?? { day: today - days + 1 + i, orders: 0, renewals: 0, failures: 0 });
  const max = Math.max(1, ...series.flatMap((d) => [d.orders, d.renewals, d.failures]));
  const W = 600, H = 160, top = 10, bottom = 20, slot = W / days, bar = Math.max(1, (slot - 4) / 3);
  const h = (n: number) => ((H - top - bottom) * n) / max;
  const bars = series.map((d, i) =>
    (["orders", "renewals", "failures"] as const)
      .map((k, j) => {
        const x = (i * slot + 2 + j * bar).toFixed(1);
        const hh = h(d[k]).toFixed(1);
        return `<rect class="${k}" x="${x}" y="${(H - bottom - h(d[k])).toFixed(1)}" width="${bar.toFixed(1)}" height="${hh}"><title>${new Date(d.day * DAY_MS).toISOString().slice(0, 10)}: ${d[k]} ${k}</title></rect>`;
      })
      .join(""),
  );
  // The last day's label ends at the right edge, so it is not cut off.
  const label = (i: number) => `<text x="${i === days - 1 ? W : (i * slot).toFixed(1)}" y="${H - 5}"${i === days - 1 ? ' text-anchor="end"' : ""}>${new Date(series[i]!.day * DAY_MS).toISOString().slice(5, 10)}</text>`;
  const totals = series.reduce((t, d) => ({ orders: t.orders + d.orders, renewals: t.renewals + d.renewals, failures: t.failures + d.failures }), { orders: 0, renewals: 0, failures: 0 });
  const summary = `Last ${days} days: ${totals.orders} orders, ${totals.renewals} renewals, ${totals.failures} failures; the busiest day had ${max}.`;
  return html`<figure>
    <svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${summary}">${raw(bars.join(""))}${raw([0, 10, 20, days - 1].map(label).join(""))}</svg>
    <figcaption class="legend"><span class="orders">orders ${totals.orders}</span><span class="renewals">renewals ${totals.renewals}</span><span class="failures">failures ${totals.failures}</span></figcaption>
  </figure>`;
}
