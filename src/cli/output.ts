/** Output for people (tables) and scripts (--json), and the exit codes every command shares. */
export const EXIT = { ok: 0, failed: 1, usage: 2, config: 78 } as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
  ) {
    super(message);
    this.name = "CliError";
  }
}

export interface Output {
  json: boolean;
  out(text: string): void;
  err(text: string): void;
}

/** Lines on a run's stdout and stderr: a text gets its newline unless it ends with one. */
export function linesOn(streams: { stdout: { write(text: string): unknown }; stderr: { write(text: string): unknown } }): Omit<Output, "json"> {
  return {
    out: (t) => void streams.stdout.write(t.endsWith("\n") ? t : t + "\n"),
    err: (t) => void streams.stderr.write(t.endsWith("\n") ? t : t + "\n"),
  };
}

function cell(v: unknown): string {
  if (v === null || v === undefined) return "-";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

/** A plain aligned table; columns in the order given. */
export function table(rows: Record<string, unknown>[], columns?: string[]): string {
  if (rows.length === 0) return "(none)";
  const cols = columns ?? Object.keys(rows[0]!);
  const cells = rows.map((r) => cols.map((c) => cell(r[c])));
  const widths = cols.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(cols.map((c) => c.toUpperCase())), ...cells.map(line)].join("\n");
}

/** Prints `data` as JSON, or as `human` text. */
export function emit(o: Output, data: unknown, human: () => string): void {
  o.out(o.json ? JSON.stringify(data, null, 2) : human());
}
