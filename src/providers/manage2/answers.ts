import { z } from "zod";
import { UnexpectedAnswerError } from "../../reseller/errors.js";
import { redactSecrets } from "../../reseller/redact.js";
import type { Answer } from "../../reseller/transport.js";
import { canonicalIp } from "../../vocabulary/ip-address.js";
import { errorFromManage2Http, errorFromManage2Status } from "./errors.js";

/**
 * Reads Manage2's JSON answers, liberally where the sources show shapes vary: numbers as
 * numbers or as strings (current JSON against older JSON and YAML), `null`, `""` or nothing
 * for an empty field, ids with or without their letter, `packages` as an object or an object
 * in an array, `XMLlookup`'s `licenseid` as one value or several, `XMLRawlookup`'s package id
 * under `package` or `packageid`. An answer or a licence we cannot read is an
 * UnexpectedAnswerError carrying the body, never a guess: a licence skipped here could be
 * bought a second time.
 *
 * Sources: docs.cpanel.net/manage2/api/manage2-api-list-license-information/ (statuses 1, 2,
 * 4; licences keyed `L<id>`), …/manage2-api-look-up-a-license-id/, …/manage2-api-raw-lookup/,
 * …/manage2-api-list-package-information/, …/manage2-api-display-groups/,
 * …/knowledge-base/manage2-return-data/ (the object form of `packages`).
 */

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => value !== null && typeof value === "object" && !Array.isArray(value);

const numeric = z.union([z.number().finite(), z.string().trim().regex(/^-?\d+(\.\d+)?$/).transform(Number)]);
/** An id as Manage2 writes it: a number, its digits, or its digits after L, P or G. */
const id = z.union([z.number().int().nonnegative(), z.string().trim().regex(/^[LPG]?\d+$/).transform((s) => Number(s.replace(/^[LPG]/, "")))]);
/** Empty is `null`, `""` or absent, in every format. */
const emptyToNull = (value: unknown): unknown => (value === undefined || value === "" ? null : value);
const text = z.preprocess(emptyToNull, z.union([z.string(), z.number().transform(String)]).nullable());
/** Unix seconds; "N/A" is the docs' "does not apply". */
const unixTime = z.preprocess(
  (value) => (value === "N/A" ? null : emptyToNull(value)),
  numeric.nullable().transform((n) => (n === null || n <= 0 ? null : new Date(n * 1000).toISOString())),
);

export type Manage2LicenseStatus = "active" | "expired" | "suspended";
const STATUS_BY_CODE: Readonly<Record<number, Manage2LicenseStatus>> = { 1: "active", 2: "expired", 4: "suspended" };

/** One licence, as XMLlicenseInfo and XMLRawlookup describe it. */
export interface Manage2License {
  licenseid: number;
  ip: string;
  /** 1 active, 2 expired, 4 suspended. */
  status: Manage2LicenseStatus;
  packageid: number;
  groupid: number | null;
  /** Free text kept on the licence; the bridge's intent rides here. */
  external_notes: string | null;
  /** ISO time it was added. */
  adddate: string | null;
  /** ISO time it expired; null while active. */
  expiredon: string | null;
  package_name?: string;
  producttype?: number;
}

const licenseSchema = z.object({
  licenseid: id,
  ip: z.string().trim().min(1),
  status: numeric.refine((n) => STATUS_BY_CODE[n] !== undefined, { error: "must be 1, 2 or 4" }).transform((n) => STATUS_BY_CODE[n]!),
  packageid: id,
  groupid: z.preprocess(emptyToNull, id.nullable()).optional(),
  external_notes: text.optional(),
  adddate: unixTime.optional(),
  expiredon: unixTime.optional(),
  package_name: z.string().optional().catch(undefined),
  producttype: numeric.optional().catch(undefined),
});

const envelope = z.object({ status: numeric.optional().catch(undefined), reason: z.preprocess(emptyToNull, z.string().nullable()).optional().catch(undefined) });

const unusable = (operation: string, answer: Answer, what: string, readOnly: boolean): UnexpectedAnswerError =>
  new UnexpectedAnswerError({
    operation,
    status: answer.status,
    raw: redactSecrets(answer.body),
    message: `${operation}: unexpected Manage2 answer (${what})`,
    mayHaveTakenEffect: !readOnly,
  });

/**
 * The body of a successful answer: HTTP 200, JSON, `status` 1. Anything else throws the error
 * that says what happened; `status` 1 is success whatever `reason` says.
 */
export function manage2Success(operation: string, answer: Answer, readOnly: boolean): { body: Json; reason: string } {
  if (answer.status !== 200) throw errorFromManage2Http({ operation, status: answer.status, body: answer.body, readOnly });
  if (answer.malformedJson) throw unusable(operation, answer, "JSON that does not parse", readOnly);
  if (!isRecord(answer.body)) throw unusable(operation, answer, answer.isJson ? "not a JSON object" : "not JSON", readOnly);
  const { status, reason } = envelope.parse(answer.body);
  if (status === undefined) throw unusable(operation, answer, "no status", readOnly);
  if (status !== 1) throw errorFromManage2Status({ operation, status, reason: reason ?? undefined, body: answer.body, readOnly });
  return { body: answer.body, reason: reason ?? "" };
}

/** A licence record, the `L<id>` key filling a missing id; throws naming the record when it cannot be read. */
function licenseOf(operation: string, answer: Answer, key: string, item: unknown): Manage2License {
  const record = isRecord(item) ? { ...item } : item;
  if (isRecord(record)) {
    if (record.licenseid === undefined && /^L\d+$/.test(key)) record.licenseid = key;
    // XMLRawlookup names the package `package` in every example, `packageid` in its table.
    if (record.packageid === undefined) record.packageid = record.package;
  }
  const parsed = licenseSchema.safeParse(record);
  if (!parsed.success) {
    const fields = [...new Set(parsed.error.issues.map((i) => i.path.join(".") || "(record)"))].join(", ");
    throw unusable(operation, answer, `licence ${key} unreadable: ${fields}`, true);
  }
  const l = parsed.data;
  const license: Manage2License = {
    licenseid: l.licenseid,
    ip: canonicalIp(l.ip) ?? l.ip,
    status: l.status,
    packageid: l.packageid,
    groupid: l.groupid ?? null,
    external_notes: l.external_notes ?? null,
    adddate: l.adddate ?? null,
    expiredon: l.expiredon ?? null,
  };
  if (l.package_name !== undefined) license.package_name = l.package_name;
  if (l.producttype !== undefined) license.producttype = l.producttype;
  return license;
}

/** XMLlicenseInfo's `licenses`: an object keyed `L<id>`; none is `{}`, `[]`, `null` or absent (undocumented, all read as none). */
export function readLicenseInfo(operation: string, answer: Answer, body: Json): Manage2License[] {
  const licenses = body.licenses;
  if (licenses === undefined || licenses === null || licenses === "") return [];
  if (Array.isArray(licenses)) return licenses.map((item, i) => licenseOf(operation, answer, String(i), item));
  if (!isRecord(licenses)) throw unusable(operation, answer, "licenses is neither an object nor a list", true);
  return Object.entries(licenses).map(([key, item]) => licenseOf(operation, answer, key, item));
}

/** XMLRawlookup's `license`: a list of records (one record alone, or records keyed `L<id>`, read as a list). */
export function readRawLookup(operation: string, answer: Answer, body: Json): Manage2License[] {
  const items = body.license ?? body.licenses;
  if (items === undefined || items === null || items === "") return [];
  if (Array.isArray(items)) return items.map((item, i) => licenseOf(operation, answer, String(i), item));
  if (!isRecord(items)) throw unusable(operation, answer, "license is neither a list nor an object", true);
  const keys = Object.keys(items);
  if (keys.length === 0) return [];
  if (keys.every((k) => /^L\d+$/.test(k))) return keys.map((k) => licenseOf(operation, answer, k, items[k]));
  return [licenseOf(operation, answer, "0", items)];
}

/** XMLlookup's `licenseid`: a string, a number, a list of them, or nothing (none found). */
export function readLookup(operation: string, answer: Answer, body: Json): number[] {
  const value = body.licenseid;
  if (value === undefined || value === null || value === "") return [];
  const parsed = z.array(id).safeParse(Array.isArray(value) ? value : [value]);
  if (!parsed.success) throw unusable(operation, answer, "licenseid is not a licence id", true);
  return parsed.data;
}

export interface Manage2Named {
  id: number;
  name: string;
}

/**
 * `packages` (XMLpackageInfo) or `groups` (XMLgroupInfo): an object keyed `P<id>`/`G<id>` with
 * the name as value, or that object inside an array (the API page's form).
 */
export function readNamed(operation: string, answer: Answer, body: Json, key: "packages" | "groups"): Manage2Named[] {
  const value = body[key];
  const maps = Array.isArray(value) ? value : [value];
  const out: Manage2Named[] = [];
  for (const map of maps) {
    if (map === undefined || map === null) continue;
    if (!isRecord(map)) throw unusable(operation, answer, `${key} is neither an object nor a list of objects`, true);
    for (const [k, name] of Object.entries(map)) {
      const parsedId = id.safeParse(k);
      if (!parsedId.success || typeof name !== "string") throw unusable(operation, answer, `${key} entry ${k} unreadable`, true);
      out.push({ id: parsedId.data, name });
    }
  }
  return out;
}

/** An optional number (a price, a flag): a string of digits or a number; anything else is absent. */
export function readNumber(body: Json, key: string): number | undefined {
  const parsed = numeric.safeParse(body[key]);
  return parsed.success ? parsed.data : undefined;
}

/** An optional text field: a string or number; empty is absent. */
export function readText(body: Json, key: string): string | undefined {
  const parsed = text.safeParse(body[key]);
  return parsed.success && parsed.data !== null ? parsed.data : undefined;
}

/** A licence id that must be in a change's answer: without it the licence is bought but unaddressable. */
export function readLicenseId(operation: string, answer: Answer, body: Json): number {
  const parsed = id.safeParse(body.licenseid);
  if (parsed.success) return parsed.data;
  throw unusable(operation, answer, "no licenseid", false);
}
