import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { z } from "zod";

/**
 * Where a panel keeps each field we read: our field → the panel's path(s), tried in order, the
 * first one present wins. Paths are dot-separated keys from the root of the JSON body; a numeric
 * segment indexes an array, and `name[key=value]` picks the first element of the array `name`
 * whose `key` equals `value` (for panels that send custom fields as `[{key, value}, ...]`).
 *
 *   "service.ip": ["account.ip", "service.fields[key=ip].value"]
 */
export type FieldMap<K extends string = string> = Readonly<Record<K, readonly string[]>>;

const SEGMENT = String.raw`[A-Za-z0-9_$-]+(?:\[[A-Za-z0-9_$-]+=[^\].\[]*\])?`;
const PATH_RE = new RegExp(`^${SEGMENT}(?:\\.${SEGMENT})*$`);
const SEGMENT_RE = /^([^[\]]+)(?:\[([^=\]]+)=([^\]]*)\])?$/;

export function isFieldPath(path: string): boolean {
  return PATH_RE.test(path);
}

/** The value at `path` (see FieldMap), or undefined. */
export function getPath(root: unknown, path: string): unknown {
  let cur: unknown = root;
  for (const segment of path.split(".")) {
    const m = SEGMENT_RE.exec(segment);
    if (!m || cur === null || typeof cur !== "object") return undefined;
    const [, name, selKey, selValue] = m;
    cur = Array.isArray(cur) && /^\d+$/.test(name!) ? cur[Number(name)] : (cur as Record<string, unknown>)[name!];
    if (selKey !== undefined) {
      if (!Array.isArray(cur)) return undefined;
      cur = cur.find((el) => el !== null && typeof el === "object" && String((el as Record<string, unknown>)[selKey]) === selValue);
    }
  }
  return cur;
}

/** The first of `paths` holding a value (null and "" count as absent). */
export function pick(root: unknown, paths: readonly string[]): unknown {
  for (const p of paths) {
    const v = getPath(root, p);
    if (v !== undefined && v !== null && !(typeof v === "string" && v.trim() === "")) return typeof v === "string" ? v.trim() : v;
  }
  return undefined;
}

/** A string or number as a trimmed string; anything else undefined. */
export function str(v: unknown): string | undefined {
  if (typeof v === "string") return v.trim() || undefined;
  if (typeof v === "number" && Number.isFinite(v)) return String(v);
  return undefined;
}

const pathList = z
  .union([z.string(), z.array(z.string()).max(20)], { error: "must be a path string or an array of path strings" })
  .transform((v) => (Array.isArray(v) ? v : [v]))
  .pipe(
    z.array(
      z.string().refine(isFieldPath, {
        error: 'must be a dot path like "account.id", "items.0.id" or "fields[key=ip].value"',
      }),
    ),
  );

export type FieldMaps = Record<string, FieldMap>;

export type FieldMapsResult = { ok: true; maps: FieldMaps } | { ok: false; problems: string[] };

/**
 * Reads ADAPTER_FIELD_MAPS_FILE: `{"hostbill": {...}, "upmind": {...}, "blesta": {...}}`, each
 * a partial override of that adapter's table (keys not given keep their defaults). Unknown
 * adapters or fields are errors, so a typo cannot silently leave a default in place.
 */
export function loadFieldMaps(path: string | undefined, defaults: Record<string, FieldMap>, cwd = process.cwd()): FieldMapsResult {
  if (!path) return { ok: true, maps: { ...defaults } };
  const file = resolve(cwd, path);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return { ok: false, problems: [e.code ? `cannot read ${file}: ${e.code}` : `${file} is not valid JSON: ${e.message}`] };
  }
  const schema = z.strictObject(
    Object.fromEntries(
      Object.entries(defaults).map(([adapter, table]) => [
        adapter,
        z.strictObject(Object.fromEntries(Object.keys(table).map((k) => [k, pathList.optional()]))).optional(),
      ]),
    ),
  );
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map((i) => {
        const where = i.path.length ? i.path.join(".") : "(root)";
        if (i.code === "unrecognized_keys") {
          const adapter = i.path[0] === undefined ? undefined : String(i.path[0]);
          const known = adapter ? Object.keys(defaults[adapter] ?? {}) : Object.keys(defaults);
          return `${where}: unknown ${adapter ? "field" : "adapter"} ${i.keys.map((k) => `"${k}"`).join(", ")} (known: ${known.join(", ")})`;
        }
        return `${where}: ${i.message}`;
      }),
    };
  }
  const maps: FieldMaps = {};
  for (const [adapter, table] of Object.entries(defaults)) {
    const override = (parsed.data as Record<string, Record<string, string[] | undefined> | undefined>)[adapter] ?? {};
    const merged: Record<string, readonly string[]> = { ...table };
    for (const [k, v] of Object.entries(override)) if (v !== undefined) merged[k] = v;
    maps[adapter] = merged;
  }
  return { ok: true, maps };
}
