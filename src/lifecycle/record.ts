export function isoToMs(iso: string | undefined): number | undefined {
  if (!iso) return undefined;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Calendar months later, as the upstream counts its terms. */
export function addMonths(ms: number, months: number): number {
  const d = new Date(ms);
  const day = d.getUTCDate();
  d.setUTCMonth(d.getUTCMonth() + months);
  // 31 Jan + 1 month is the end of February, not 3 March.
  if (d.getUTCDate() < day) d.setUTCDate(0);
  return d.getTime();
}
