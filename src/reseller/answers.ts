import { canonicalIp, sameIp } from "../vocabulary/ip-address.js";
import { z } from "zod";
import { errorFromV1Answer, errorFromV2Message, UnexpectedAnswerError, upstreamMessageOf } from "./errors.js";
import { redactSecrets } from "./redact.js";
import type { Answer } from "./transport.js";

/**
 * Reads upstream answers. The contract leaves v1 success bodies "not shown", so we read
 * liberally (service-contract.md section 7): a shape we cannot use is an
 * UnexpectedAnswerError carrying the body, never a crash.
 */

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json => value !== null && typeof value === "object" && !Array.isArray(value);

/** The body itself, then its `data`: where v1 puts what it answers. */
function layers(body: unknown): Json[] {
  if (!isRecord(body)) return [];
  return isRecord(body.data) ? [body, body.data] : [body];
}

/** The first value under one of `keys` at the top level or under `data`. */
export function pick(body: unknown, keys: readonly string[]): unknown {
  for (const layer of layers(body)) {
    for (const key of keys) {
      if (layer[key] !== undefined && layer[key] !== null) return layer[key];
    }
  }
  return undefined;
}

/** Like `pick`, and also one level down inside objects under `data` (e.g. data.reseller.balance). */
function pickDeep(body: unknown, keys: readonly string[]): unknown {
  const found = pick(body, keys);
  if (found !== undefined || !isRecord(body) || !isRecord(body.data)) return found;
  for (const inner of Object.values(body.data)) {
    if (isRecord(inner)) {
      for (const key of keys) if (inner[key] !== undefined && inner[key] !== null) return inner[key];
    }
  }
  return undefined;
}

const text = z.union([z.string(), z.number()]).transform(String);
const numeric = z.union([z.number(), z.string().trim().regex(/^-?\d+(\.\d+)?$/).transform(Number)]);
const flag = z.union([
  z.boolean(),
  z.literal(1).transform(() => true),
  z.literal(0).transform(() => false),
  z.string().regex(/^(true|false|1|0|yes|no)$/i).transform((s) => /^(true|1|yes)$/i.test(s)),
]);
/** ISO strings pass through; Unix seconds or milliseconds become ISO strings. */
const timestamp = z.union([
  z.string().min(1),
  z.number().finite().transform((n) => new Date(n < 1e12 ? n * 1000 : n).toISOString()),
]);

/** Reads an optional field: a value of the wrong shape counts as absent, never as an error. */
function optional<T>(schema: z.ZodType<T>, value: unknown): T | undefined {
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

export function readText(body: unknown, keys: readonly string[]): string | undefined {
  return optional(text, pickDeep(body, keys));
}

export function readNumber(body: unknown, keys: readonly string[]): number | undefined {
  return optional(numeric, pickDeep(body, keys));
}

/** `expires_at` of a register/renew/bundle answer, if the upstream tells it. */
export function readExpiresAt(body: unknown): string | undefined {
  return optional(timestamp, pick(body, ["expires_at", "expiry_date", "expires"]));
}

const unusable = (operation: string, answer: Answer, what: string): UnexpectedAnswerError =>
  new UnexpectedAnswerError({
    operation,
    status: answer.status,
    message: `${operation}: unexpected answer (${what})`,
    upstreamMessage: upstreamMessageOf(answer.body),
    raw: redactSecrets(answer.body),
  });

/** A yes/no as the vendor spells it (its legacy interface writes "True"/"False"), padding and case ignored. */
const readFlag = (value: unknown): boolean | undefined => optional(flag, typeof value === "string" ? value.trim() : value);

/**
 * Whether a body reports an error: a message under `error` (or an object or list there), or
 * `error` set to a yes. An empty, null or "no" `error` is the all-clear some APIs always send.
 */
function reportsError(body: unknown): boolean {
  if (!isRecord(body)) return false;
  const { error } = body;
  if (Array.isArray(error)) return error.length > 0;
  if (isRecord(error)) return Object.keys(error).length > 0;
  const said = readFlag(error);
  if (said !== undefined) return said;
  return typeof error === "string" && !/^(|null|none)$/i.test(error.trim());
}

/**
 * A v1 answer's body if it is a success, else the error it stands for. Any 2xx is success unless
 * the body refuses: `success` spelled false in any of the vendor's ways (false, "False", 0, "0",
 * "no"), or, with no readable `success`, an error reported instead of a result. A refusal read
 * as success would mark a licence active with nothing bought; an explicit yes under `success`
 * still wins over an `error` beside it, since that is the field made to say so.
 */
export function v1Success(operation: string, answer: Answer): unknown {
  const ok = answer.status >= 200 && answer.status < 300;
  const said = isRecord(answer.body) ? readFlag(answer.body.success) : undefined;
  const refused = said === false || (said === undefined && reportsError(answer.body));
  if (ok && !refused) return answer.body;
  throw errorFromV1Answer({ operation, status: answer.status, body: answer.body });
}

/**
 * Markup anywhere: a closing tag, an opening tag HTML error pages use, a comment, a doctype, a
 * processing instruction. Shell's `<(...)`, `<<EOF`, `< file` and a `<KEY>` placeholder are none.
 */
const MARKUP =
  /<\/[a-z][\w:-]*\s*>|<(a|b|big|body|br|center|code|div|em|font|h[1-6]|head|hr|html|i|li|meta|p|pre|small|span|strong|table|td|title|tr|tt|u|ul)(\s[^<>]*)?\/?>|<!--|<!doctype\b|<\?(xml|php)\b/i;
/** An HTML entity: text escaped for a page, which a shell would run with `&lt;` where `<` was meant. */
const HTML_ENTITY = /&(lt|gt|amp|quot|apos|nbsp|#\d+|#x[\da-f]+);/i;
/** A line PHP (or another runtime) starts its messages with; no command starts so. */
const RUNTIME_MESSAGE =
  /^\s*(php\s+)?(fatal error|parse error|catchable fatal error|recoverable fatal error|warning|notice|deprecated|strict standards|error|exception|uncaught exception)\s*:/im;
/** Characters of shell syntax (paths, pipes, redirections, substitutions, quoting) or a word that starts with a dash (an option). */
const SHELL_SYNTAX = /[/|&;$<>=(){}[\]`\\"*~#]|(^|\s)-/;
/** A one-word answer that reports an outcome and is no command. */
const STATUS_WORD = /^(ok|okay|success|successful|done|true|false|null|none|undefined|error|failed|failure|n\/a|-?\d+(\.\d+)?)$/i;
/**
 * Words, not shell: starts with a capital and has no shell syntax ("License not found",
 * "Unauthorized"). A line of shell starts with a program, a path or an assignment
 * (`KEY=... sh`), not with a capitalised word.
 */
const isProse = (line: string): boolean => /^[A-Z]/.test(line) && !SHELL_SYNTAX.test(line);

/**
 * Why `text` is not an install command, if it is not. It is mailed to the customer to run as
 * root, so only what reads as shell passes: no markup, no runtime error message, no status word,
 * no line of prose. Shell syntax (`bash <(curl ...)`, `sh -c "..."`, `&&`, `|`) is never held
 * against it.
 */
function notACommand(text: string): string | undefined {
  if (text === "") return "no install command";
  if (MARKUP.test(text)) return "markup, not an install command";
  if (HTML_ENTITY.test(text)) return "HTML-escaped text, not an install command";
  if (RUNTIME_MESSAGE.test(text)) return "an error message, not an install command";
  if (STATUS_WORD.test(text)) return "a status word, not an install command";
  // Only when no line reads as shell: a vendor may put a line of words before the command
  // ("Run as root:"), and refusing that would keep every customer from their mail.
  const lines = text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== "");
  if (lines.every(isProse)) return "prose, not an install command";
  return undefined;
}

/**
 * A string under `command` or `install_command` (top level or `data`), or a plain-text body, if
 * it reads as a command. Anything else is an UnexpectedAnswerError, which the mail job retries.
 */
export function readInstallCommand(operation: string, answer: Answer): string {
  const { body } = answer;
  if (answer.malformedJson) throw unusable(operation, answer, "a JSON body that does not parse");
  const found = typeof body === "string" ? body : pick(body, ["command", "install_command"]);
  if (typeof found !== "string") throw unusable(operation, answer, "no install command");
  const command = found.trim();
  const why = notACommand(command);
  if (why !== undefined) throw unusable(operation, answer, why);
  return command;
}

/**
 * A licence as reconcile and the adoption plan compare it: only what they read of the list, so
 * that a list of 100,000 licences is held as small records (issue 25), nothing else kept.
 */
export interface ListedLicense {
  ip: string;
  type: string;
  status?: string;
  expires_at?: string;
  variant?: string;
  free?: boolean;
  bundle_key?: string;
}

export interface UpstreamLicense extends ListedLicense {
  billingcycle?: number;
  /** The licence this free companion belongs to, as the upstream names it. */
  parent?: string;
  /** The item as received (secrets redacted), unknown keys included. */
  raw: Record<string, unknown>;
}

/** The array under the first of these places that holds one. */
function findArray(body: unknown, keys: readonly string[]): unknown[] | undefined {
  if (Array.isArray(body)) return body;
  for (const layer of layers(body)) {
    if (Array.isArray(layer.data)) return layer.data;
    for (const key of keys) if (Array.isArray(layer[key])) return layer[key] as unknown[];
  }
  return undefined;
}

/** The list's items, or the error of an answer that holds none. */
function licenseItems(operation: string, answer: Answer): unknown[] {
  const items = findArray(answer.body, ["licenses", "licences"]);
  if (!items) throw unusable(operation, answer, "no licence list");
  return items;
}

const filled = (value: unknown): value is string => typeof value === "string" && value !== "";

// `optional` for the fields of a list item, read a hundred thousand times a list: the shapes the
// schema takes as they are (absent, a string, a boolean, a finite number) skip it; anything
// else goes through it.
const textField = (v: unknown) => (v === undefined ? undefined : typeof v === "string" ? v : optional(text, v));
const timestampField = (v: unknown) => (v === undefined ? undefined : filled(v) ? v : optional(timestamp, v));
const flagField = (v: unknown) => (v === undefined ? undefined : typeof v === "boolean" ? v : optional(flag, v));
const numericField = (v: unknown) => (v === undefined ? undefined : typeof v === "number" && Number.isFinite(v) ? v : optional(numeric, v));

/**
 * One item of the list as the bridge compares it, or undefined for an item without an IP and a
 * type. The fields are read from the item's own values:
 * none of them is a secret-named key, and the transport scrubs the token out of every string of
 * the answer (of the list read item by item, out of the records made of it: ./list-json.ts).
 */
export function listedOf(item: unknown): ListedLicense | undefined {
  if (!isRecord(item) || !filled(item.ip) || !filled(item.type)) return undefined;
  // The bridge compares addresses by their one canonical spelling; the upstream may use another.
  const license: ListedLicense = { ip: canonicalIp(item.ip) ?? item.ip, type: item.type };
  const status = textField(item.status);
  const expiresAt = timestampField(item.expires_at);
  const variant = textField(item.variant);
  const free = flagField(item.free);
  const bundleKey = textField(item.bundle_key);
  if (status !== undefined) license.status = status;
  if (expiresAt !== undefined) license.expires_at = expiresAt;
  if (variant !== undefined) license.variant = variant;
  if (free !== undefined) license.free = free;
  if (bundleKey !== undefined) license.bundle_key = bundleKey;
  return license;
}

/** One item of the list as the lifecycle reads it, `raw` included (secret-named keys masked), or undefined as for listedOf. */
export function upstreamLicenseOf(item: unknown): UpstreamLicense | undefined {
  const listed = listedOf(item);
  if (!listed) return undefined;
  const raw = redactSecrets(item) as Record<string, unknown>;
  const license: UpstreamLicense = { ...listed, raw };
  const billingcycle = numericField(raw.billingcycle);
  const parent = textField(raw.parent);
  if (billingcycle !== undefined) license.billingcycle = billingcycle;
  if (parent !== undefined) license.parent = parent;
  return license;
}

/** The licence list: an array at the top level or under `data` or `licenses`; bad items skipped. */
export function readLicenseList(operation: string, answer: Answer): UpstreamLicense[] {
  const licenses: UpstreamLicense[] = [];
  for (const item of licenseItems(operation, answer)) {
    const license = upstreamLicenseOf(item);
    if (license) licenses.push(license);
  }
  return licenses;
}

/**
 * What to keep of each item of the list, for `parseListJson`, to have the full licences
 * (upstreamLicenseOf) at one IP, in any spelling, and nothing of the other items.
 */
export function licensesAtOf(ip: string): (item: unknown) => UpstreamLicense | undefined {
  return (item) => {
    const listed = listedOf(item);
    return listed && sameIp(listed.ip, ip) ? upstreamLicenseOf(item) : undefined;
  };
}

/**
 * The licence list as the records `keep` made of its items, of an answer whose JSON was read by
 * `parseListJson` with `keep` (listedOf: the compact records, what readLicenseList would make
 * of each item less `raw`, `billingcycle` and `parent`; licensesAtOf: the full licences at one
 * IP): each item became its record as it was parsed, so the list is taken as it is.
 */
export function readListedLicenses<T extends ListedLicense = ListedLicense>(operation: string, answer: Answer): T[] {
  return licenseItems(operation, answer) as T[];
}

/** The key of a registered bundle, at the top level or under `data`. Its absence is fatal. */
export function readBundleKey(operation: string, answer: Answer): string {
  const key = optional(text, pick(answer.body, ["bundle_key"]));
  if (key !== undefined && key !== "") return key;
  throw unusable(operation, answer, "no bundle_key");
}

export interface SubReseller {
  id?: string;
  name?: string;
  email?: string;
  role?: string;
  commission_rate?: number;
  balance?: number;
  raw: Record<string, unknown>;
}

/** Sub-resellers: an array at the top level, under `data`, or under `sub_resellers`. */
export function readSubResellerList(operation: string, answer: Answer): SubReseller[] {
  const items = findArray(answer.body, ["sub_resellers", "subResellers", "resellers"]);
  if (!items) throw unusable(operation, answer, "no sub-reseller list");
  return items.filter(isRecord).map((item) => {
    const raw = redactSecrets(item) as Record<string, unknown>;
    const out: SubReseller = { raw };
    const id = optional(text, raw.id);
    const name = optional(text, raw.name);
    const email = optional(text, raw.email);
    const role = optional(text, raw.role);
    const commissionRate = optional(numeric, raw.commission_rate);
    const balance = optional(numeric, raw.balance);
    if (id !== undefined) out.id = id;
    if (name !== undefined) out.name = name;
    if (email !== undefined) out.email = email;
    if (role !== undefined) out.role = role;
    if (commissionRate !== undefined) out.commission_rate = commissionRate;
    if (balance !== undefined) out.balance = balance;
    return out;
  });
}

const v2Body = z.object({
  ok: z.union([z.boolean(), z.string()]),
  message: z.union([z.string(), z.number()]).transform(String).optional(),
});

/**
 * A v2 answer: `{"ok":"True"|"False","message"}` at HTTP 200 (`ok` read case-insensitively).
 * A plain-text or HTML body is an error message; other statuses are classified as v1's.
 */
export function readV2Answer(operation: string, answer: Answer): { message: string } {
  const { status, body } = answer;
  const raw = redactSecrets(body);
  if (status < 200 || status >= 300) {
    const message = upstreamMessageOf(body);
    // A v2 refusal with a non-200 status still says what it is; an outage is an outage.
    if (message !== undefined && status < 500 && status !== 429) {
      const byMessage = errorFromV2Message({ operation, message, status, raw, refused: true });
      if (byMessage.kind !== "unexpected") throw byMessage;
    }
    throw errorFromV1Answer({ operation, status, body });
  }
  if (typeof body === "string") {
    const message = upstreamMessageOf(body);
    if (message === undefined) throw unusable(operation, answer, "empty body");
    throw errorFromV2Message({ operation, message, status, raw, refused: false });
  }
  const parsed = v2Body.safeParse(body);
  if (!parsed.success) throw unusable(operation, answer, "no ok field");
  const message = parsed.data.message ?? "";
  const ok = parsed.data.ok;
  if (ok === true || (typeof ok === "string" && ok.trim().toLowerCase() === "true")) return { message };
  if (ok === false || (typeof ok === "string" && ok.trim().toLowerCase() === "false")) {
    throw errorFromV2Message({ operation, message, status, raw, refused: true });
  }
  throw unusable(operation, answer, "ok is neither True nor False");
}

/** A bundle's state: `data.status` before a top-level `status`, which may just mean "success". */
export function readBundleStatus(body: unknown): string | undefined {
  const inData = isRecord(body) && isRecord(body.data) ? optional(text, body.data.status ?? body.data.bundle_status) : undefined;
  if (inData !== undefined) return inData;
  const top = isRecord(body) ? optional(text, body.bundle_status ?? body.status) : undefined;
  return top !== undefined && !/^(success|ok|error|true|false)$/i.test(top) ? top : undefined;
}
