import { z } from "zod";
import { canonicalIp } from "../../vocabulary/ip-address.js";
import { redactSecrets } from "../../reseller/redact.js";
import { UnexpectedAnswerError, UpstreamUnavailableError, upstreamMessageOf, type ResellerError } from "../../reseller/errors.js";
import type { Answer } from "../../reseller/transport.js";
import { errorFromClnRefusal } from "./errors.js";

/**
 * Reads CLN's answers: the envelope `{"success": bool, "message": "...", "data": ...}` (message
 * optional), then `data` per operation (CloudLinux REST API, "IP-based licenses API"). Only
 * `success === true` is success, whatever the HTTP status (CloudLinux's WHMCS module,
 * ApiResponse::getStatus, ignores it too). Read liberally: numbers may come as strings, booleans
 * as 1/0 or "true", empty lists as null; anything we cannot use is an error, never a guess.
 */

/** A licence as `register`, `list` and `server` give it. */
export interface ClnLicense {
  /** Canonical spelling (see vocabulary/ip-address.ts). */
  ip: string;
  type: number;
  /** Whether a server has registered with CLN under this licence yet ("CLN licenses only"). */
  registered: boolean;
  /** As CLN writes it, e.g. "2014-04-30T11:26-0400"; null when not given. */
  created: string | null;
  /** `created` as an ISO instant, when it reads as one. */
  createdAt: string | null;
}

/** A licence as `server` gives it: the server that checked in with it, and when. */
export interface ClnServerLicense extends ClnLicense {
  serverInfo: string | null;
  /** As CLN writes it. */
  lastCheckin: string | null;
}

export interface ClnAvailability {
  /** Types that can still be registered on the IP. */
  available: number[];
  /** Types this account holds on the IP. */
  owned: number[];
}

const envelopeSchema = z.looseObject({
  success: z.boolean(),
  message: z.string().nullish(),
  data: z.unknown(),
});

const typeNumber = z.union([z.number().int(), z.string().trim().regex(/^\d+$/).transform(Number)]);
const flag = z.union([
  z.boolean(),
  z.literal(1).transform(() => true),
  z.literal(0).transform(() => false),
  z.string().trim().regex(/^(true|false|1|0)$/i).transform((s) => /^(true|1)$/i.test(s)),
]);
const optionalText = z.string().nullish().transform((s) => (s === undefined || s === null || s.trim() === "" ? null : s));
const ipText = z.string().trim().min(1).transform((s) => canonicalIp(s) ?? s);
/** null is how an empty list may come. */
const listOf = <T extends z.ZodType>(item: T) =>
  z
    .array(item)
    .nullable()
    .transform((items): z.output<T>[] => items ?? []);

const licenseSchema = z
  .looseObject({
    ip: ipText,
    type: typeNumber,
    registered: flag.nullish().transform((v) => v ?? false),
    created: optionalText,
  })
  .transform(
    (l): ClnLicense => ({ ip: l.ip, type: l.type, registered: l.registered, created: l.created, createdAt: clnTimeToIso(l.created) }),
  );

const serverLicenseSchema = z
  .looseObject({
    ip: ipText,
    type: typeNumber,
    registered: flag.nullish().transform((v) => v ?? false),
    created: optionalText,
    server_info: optionalText,
    last_checkin: optionalText,
  })
  .transform(
    (l): ClnServerLicense => ({
      ip: l.ip,
      type: l.type,
      registered: l.registered,
      created: l.created,
      createdAt: clnTimeToIso(l.created),
      serverInfo: l.server_info,
      lastCheckin: l.last_checkin,
    }),
  );

export const clnData = {
  license: licenseSchema,
  licenses: listOf(licenseSchema),
  serverLicenses: listOf(serverLicenseSchema),
  types: listOf(typeNumber),
  flag,
  availability: z.looseObject({ available: listOf(typeNumber), owned: listOf(typeNumber) }).transform((a): ClnAvailability => a),
};

/**
 * CLN's time, "yyyy-MM-ddTHH:mmZ" (REST API: "2014-04-30T11:26-0400"), as an ISO instant; seconds,
 * "Z" and an offset with a colon are read too. null when it does not read.
 */
export function clnTimeToIso(text: string | null): string | null {
  if (text === null) return null;
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2}(?:\.\d+)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/.exec(text.trim());
  if (!m) return null;
  const offset = m[4] === undefined || m[4] === "Z" ? "Z" : `${m[4].slice(0, 3)}:${m[4].slice(-2)}`;
  const ms = Date.parse(`${m[1]}T${m[2]}${m[3] ?? ":00"}${offset}`);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/**
 * The `data` of a successful answer, or the error the answer stands for. `change`: the call
 * changes something upstream, so an answer we cannot read may hide a change that was made.
 */
export function readEnvelope(operation: string, answer: Answer, change: boolean): unknown {
  if (!answer.isJson || answer.malformedJson) throw notClnsAnswer(operation, answer, change, answer.malformedJson ? "a JSON body that does not parse" : "not JSON");
  const parsed = envelopeSchema.safeParse(answer.body);
  if (!parsed.success) throw notClnsAnswer(operation, answer, change, "no boolean success");
  const { success, message, data } = parsed.data;
  if (success) return data;
  throw errorFromClnRefusal({ operation, status: answer.status, message: message ?? "", change, raw: redactSecrets(answer.body) });
}

/** `data` through `schema`, or an UnexpectedAnswerError saying what did not fit. */
export function readData<T extends z.ZodType>(operation: string, answer: Answer, data: unknown, schema: T, change: boolean): z.output<T> {
  const parsed = schema.safeParse(data);
  if (parsed.success) return parsed.data;
  const where = parsed.error.issues[0]?.path.join(".");
  throw new UnexpectedAnswerError({
    operation,
    status: answer.status,
    message: `${operation}: unexpected answer (data${where ? `.${where}` : ""}: ${parsed.error.issues[0]?.message ?? "unreadable"})`,
    raw: redactSecrets(answer.body),
    mayHaveTakenEffect: change,
  });
}

/**
 * An answer that is not CLN's envelope: an HTML page from a proxy, a body cut short. Whatever
 * its status, a change may have been made before it came (a register, then a gateway's 502).
 */
function notClnsAnswer(operation: string, answer: Answer, change: boolean, what: string): ResellerError {
  const init = {
    operation,
    status: answer.status,
    upstreamMessage: upstreamMessageOf(answer.body),
    raw: redactSecrets(answer.body),
    mayHaveTakenEffect: change,
  };
  if (answer.status >= 500) return new UpstreamUnavailableError({ ...init, reason: "status" });
  return new UnexpectedAnswerError({ ...init, message: `${operation}: unexpected answer (${what}, HTTP ${answer.status})` });
}
