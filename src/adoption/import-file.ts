import { ADOPTION_COLUMNS, parseRows, type AdoptionRow } from "./rows.js";

/**
 * An import file for `license-bridge adopt <file>`: CSV with a header line naming the columns
 * (ADOPTION_COLUMNS, in any order; only service_identifier, package_identifier, ip and
 * billing_cycle are needed), or JSON: an array of rows or `{"services": [...]}`. Problems are
 * named by line and column (CSV) or by row index and field (JSON), one line each.
 */
export type ImportResult = { ok: true; rows: AdoptionRow[] } | { ok: false; problems: string[] };

/**
 * The file's bytes as text, or why they are not an export to read: a spreadsheet, an archive,
 * UTF-16, Latin-1 or text carrying control characters is refused in one line that names the
 * place and never quotes the bytes (a terminal would act on its escapes). Tab, CR and LF are
 * the only control characters a CSV or JSON export holds.
 */
export function decodeImport(bytes: Uint8Array): { ok: true; text: string } | { ok: false; problem: string } {
  const refuse = (what: string) => ({ ok: false as const, problem: `not a CSV or JSON export in UTF-8 (${what}); nothing planned` });
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) return refuse("UTF-16 text: save the export as UTF-8");
  if (bytes.includes(0)) return refuse("a binary file");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    const lossy = new TextDecoder("utf-8").decode(bytes);
    const at = lossy.indexOf("\uFFFD");
    return refuse(`invalid UTF-8 on line ${lineAt(lossy, at)}, Latin-1 or another encoding: save the export as UTF-8`);
  }
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  const control = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/.exec(text);
  if (control) {
    const code = control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, "0");
    return refuse(`a control character, U+${code}, on line ${lineAt(text, control.index)}`);
  }
  return { ok: true, text };
}

const lineAt = (text: string, index: number) => text.slice(0, Math.max(0, index)).split("\n").length;

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

/** A header cell as a problem quotes it: a file that is not CSV at all may have one line of megabytes. */
const shown = (cell: string) => (cell.length > 60 ? `${cell.slice(0, 60)}…` : cell);

function readCsv(text: string): ImportResult {
  const { rows, lines } = parseCsv(text);
  const nonEmpty = rows.map((r, i) => ({ r, line: lines[i]! })).filter(({ r }) => !(r.length === 1 && r[0]!.trim() === ""));
  const header = nonEmpty.shift();
  if (!header) return { ok: false, problems: ["the file is empty: a header line naming the columns comes first"] };
  const names = header.r.map((h) => h.trim().toLowerCase());
  const problems: string[] = [];
  names.forEach((n, i) => {
    if (!(ADOPTION_COLUMNS as readonly string[]).includes(n)) problems.push(`line ${header.line}, column ${i + 1} ("${shown(header.r[i]!)}"): not a known column (known: ${ADOPTION_COLUMNS.join(", ")})`);
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
