/**
 * Environment variables that look like one of ours misspelt (`RESELER_API_URL`): an operator's
 * typo would otherwise be ignored in silence, and a missing reseller URL is the difference
 * between live and sandbox mode. Only names near a known one count, so the rest of a machine's
 * environment (HOME, PATH, NODE_OPTIONS, ...) is never judged.
 */

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * `[name, likely]` for each variable in `env` that is not one of `known` but is one or two edits
 * from one (at most one edit per five letters, so short names are not matched by chance).
 */
export function nearMisses(env: Readonly<Record<string, string | undefined>>, known: readonly string[]): [string, string][] {
  const knownSet = new Set(known);
  const out: [string, string][] = [];
  for (const name of Object.keys(env)) {
    if (knownSet.has(name) || !name.includes("_") || name.length < 6 || name !== name.toUpperCase()) continue;
    let best: [string, number] | undefined;
    for (const k of known) {
      if (Math.abs(k.length - name.length) > 2) continue;
      const dist = editDistance(name, k);
      if (!best || dist < best[1]) best = [k, dist];
    }
    if (best && best[1] <= Math.min(2, Math.floor(name.length / 5))) out.push([name, best[0]]);
  }
  return out;
}
