import { ADOPTION_COLUMNS, parseRows, type AdoptionRow } from "./rows.js";

/**
 * An import file for `license-bridge adopt <file>`: CSV with a header line naming the columns
 * (ADOPTION_COLUMNS, in any order; only service_identifier, package_identifier, ip and
 * billing_cycle are needed), or JSON: an array of rows or `{"services": [...]}`. Problems are
 * named by line and column (CSV) or by row index and field (JSON), one line each.
 */
export type ImportResult = { ok: true; rows: AdoptionRow[] } | { ok: false; problems: string[] };

export function readImport(text: string): ImportResult {
  const body = text.replace(/^\uFEFF/, "");
  const first = body.trimStart()[0];
  return first === "[" || first === "{" ? readJson(body) : readCsv(body);
}

function readJson(text: string): ImportResult {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, problems: [`not valid JSON: ${(err as Error).message}`] };
  }
  const list = Array.isArray(json) ? json : json !== null && typeof json === "object" && Array.isArray((json as { services?: unknown }).services) ? (json as { services: unknown[] }).services : undefined;
  if (!list) return { ok: false, problems: ['JSON must be an array of services or {"services": [...]}'] };
  const parsed = parseRows(list, Array.isArray(json) ? "" : "services");
  if (parsed.ok) return parsed;
  return { ok: false, problems: Object.entries(parsed.errors).map(([field, messages]) => `${field}: ${messages.join("; ")}`) };
}

/** RFC 4180: quoted fields may hold commas, quotes ("") and line breaks; CRLF or LF. */
export function parseCsv(text: string): { rows: string[][]; lines: number[] } {
  const rows: string[][] = [];
  const lines: number[] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  let line = 1;
  let rowLine = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else {
        if (c === "\n") line++;
        field += c;
      }
    } else if (c === '"' && field === "") quoted = true;
    else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      row.push(field);
      rows.push(row);
      lines.push(rowLine);
      row = [];
      field = "";
      rowLine = ++line;
    } else field += c;
  }
  if (field !== "" || row.length > 0) {
    row.push(field);
    rows.push(row);
    lines.push(rowLine);
  }
  return { rows, lines };
}

function readCsv(text: string): ImportResult {
  const { rows, lines } = parseCsv(text);
  const nonEmpty = rows.map((r, i) => ({ r, line: lines[i]! })).filter(({ r }) => !(r.length === 1 && r[0]!.trim() === ""));
  const header = nonEmpty.shift();
  if (!header) return { ok: false, problems: ["the file is empty: a header line naming the columns comes first"] };
  const names = header.r.map((h) => h.trim().toLowerCase());
  const problems: string[] = [];
  names.forEach((n, i) => {
    if (!(ADOPTION_COLUMNS as readonly string[]).includes(n)) problems.push(`line ${header.line}, column ${i + 1} ("${header.r[i]}"): not a known column (known: ${ADOPTION_COLUMNS.join(", ")})`);
    else if (names.indexOf(n) !== i) problems.push(`line ${header.line}, column ${i + 1}: "${n}" appears twice`);
  });
  if (problems.length) return { ok: false, problems };
  const objects = nonEmpty.map(({ r, line }) => {
    if (r.length !== names.length) problems.push(`line ${line}: ${r.length} values, the header names ${names.length} columns`);
    return Object.fromEntries(names.map((n, i) => [n, r[i] ?? ""]));
  });
  if (problems.length) return { ok: false, problems };
  const parsed = parseRows(objects, "");
  if (parsed.ok) return parsed;
  // "[3].ip" → the file's own line and column.
  return {
    ok: false,
    problems: Object.entries(parsed.errors).map(([field, messages]) => {
      const m = /^\[(\d+)\]\.?(.*)$/.exec(field);
      return m ? `line ${nonEmpty[Number(m[1])]!.line}, column ${m[2]}: ${messages.join("; ")}` : `${field}: ${messages.join("; ")}`;
    }),
  };
}
