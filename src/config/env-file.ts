import { readFileSync } from "node:fs";

/**
 * ENV_FILE: `KEY=value` lines, the syntax of systemd's EnvironmentFile (and docker's env files):
 * blank lines and lines starting with # or ; are skipped, an optional `export ` is dropped, and a
 * value in single or double quotes loses them (double quotes take \\" and \\\\). The service reads
 * it at start and again on SIGHUP, so a secret rotated in the file takes effect without a
 * restart: the environment of a running process cannot change, a file can.
 *
 * Returns the variables, or the problems (one per bad line, never quoting a value: it may be a secret).
 */
export function parseEnvFile(text: string): { vars: Record<string, string>; problems: string[] } {
  const vars: Record<string, string> = {};
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) return;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m) {
      problems.push(`line ${i + 1} is not KEY=value`);
      return;
    }
    let value = m[2]!;
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1).replace(/\\(["\\])/g, "$1");
    else if (value.length >= 2 && value.startsWith("'") && value.endsWith("'")) value = value.slice(1, -1);
    else if (value.startsWith('"') || value.startsWith("'")) {
      problems.push(`line ${i + 1} (${m[1]}) opens a quote it does not close`);
      return;
    }
    vars[m[1]!] = value;
  });
  return { vars, problems };
}

/** Reads ENV_FILE; `problems` when it cannot be read or has bad lines. */
export function readEnvFile(path: string): { vars: Record<string, string>; problems: string[] } {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    return { vars: {}, problems: [`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`] };
  }
  return parseEnvFile(text);
}
