/** The run's audit entry: what it found and what it repaired. */
export function reconcileSummary(r: { drift: unknown[]; fixed: unknown[]; manual: unknown[] }): string {
  return `${r.drift.length} drift item(s): ${r.fixed.length} fixed, ${r.manual.length} for a person`;
}
