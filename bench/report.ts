/** Prints a result table for people, then one `name: value` line per figure for scripts. */
export interface Figure {
  name: string;
  value: number;
  unit?: string;
  target?: string;
  met?: boolean;
}

export function report(title: string, figures: Figure[]): void {
  const rows = figures.map((f) => [f.name, `${round(f.value)}${f.unit ? ` ${f.unit}` : ""}`, f.target ?? "", f.met === undefined ? "" : f.met ? "met" : "NOT met"]);
  const head = ["figure", "value", "target", ""];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  console.log(`\n## ${title}\n`);
  console.log(line(head));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of rows) console.log(line(r));
  console.log("");
  for (const f of figures) console.log(`${f.name}: ${round(f.value)}`);
}

function round(v: number): string {
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(2) : v.toFixed(3);
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A Markdown table with its columns padded to their widest cell, as bench/RESULTS.md keeps them. */
export function markdownTable(head: string[], cells: string[][]): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => `| ${c.map((x, i) => x.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(head), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...cells.map(line)];
}
