import type { z } from "zod";
import type { Logger } from "../../log/logger.js";
import { urlCredentials } from "../../log/url-credentials.js";
import type { ConnectionPool } from "../../reseller/connection-pool.js";
import { NotFoundError } from "../../reseller/errors.js";
import { checkInput } from "../../reseller/input.js";
import { redactSecrets } from "../../reseller/redact.js";
import {
  createTransport,
  DEFAULT_LICENSE_LIST_MAX_ANSWER_BYTES,
  observeCall,
  type RetryOptions,
  type UpstreamObserver,
} from "../../reseller/transport.js";
import {
  manage2Success,
  readLicenseId,
  readLicenseInfo,
  readLookup,
  readNamed,
  readNumber,
  readRawLookup,
  readText,
  type Manage2License,
  type Manage2Named,
} from "./answers.js";
import {
  flag,
  licenseAddInput,
  licenseExpireInput,
  licenseInfoInput,
  licenseReActivateInput,
  lookupInput,
  packageUpdateInput,
  transferInput,
  updateMetadataInput,
} from "./inputs.js";

/**
 * cPanel's Manage2 API, typed: one method per function the bridge uses, each checked before it
 * is sent and read liberally when it answers.
 *
 * - `https://manage2.cpanel.net/<Function>.cgi`, GET with a query or POST with a form; under
 *   POST Manage2 ignores the URL's own variables, so `output=json` goes in the body
 *   (docs.cpanel.net/manage2/knowledge-base/guide-to-the-manage2-api/). POST by default, as
 *   cPanel's PHP class 3.13 does.
 * - HTTP Basic with the Manage2 user and password, from an Access IP
 *   (…/knowledge-base/manage2-authentication-methods/).
 * - Success is `status` 1 and nothing else (cPanel's Perl class: `int(status) != 1` fails).
 * - Parameters whose Manage2 default is a trap are always sent: `force`/`reactivateok` (default
 *   1) on add, `dryrun` (default 1 on the ReActivate page) on reactivate, `packageid` on
 *   transfer (without it every licence on the IP moves), `legal=1` on add (cPanel's PHP and
 *   Perl classes send it).
 *
 * The password travels in the Authorization header only, and is scrubbed (with its Basic
 * form) from every log line, error and kept body. Retries: reads only, and requests that never
 * left (src/reseller/transport.ts); a change whose answer is lost is an
 * UpstreamUnavailableError with `mayHaveTakenEffect`, for the caller to look before acting again.
 */

export const MANAGE2_DEFAULT_URL = "https://manage2.cpanel.net";

export interface Manage2ClientOptions {
  /** Where the `<Function>.cgi` paths live. (Default: https://manage2.cpanel.net) */
  baseUrl?: string;
  /** The Manage2 user (an e-mail address). */
  user: string;
  /** Never logged. */
  password: string;
  /** Manage2 accepts both. (Default: "POST", every parameter in the body) */
  method?: "GET" | "POST";
  /** Per attempt. (Default: 10000) */
  timeoutMs?: number;
  /** Every call is logged at debug level, secrets scrubbed. (Default: silent) */
  logger?: Logger;
  /** Retries of reads and of requests that never left. (Default: 2 retries from 250 ms) */
  retry?: Partial<RetryOptions>;
  /** Told how every call ended (operation, status, outcome, duration), e.g. for metrics. (Default: none) */
  observer?: UpstreamObserver;
  /** Kept-alive connections shared with other clients; whoever created it closes it. (Default: the client's own, closed by `close()`) */
  pool?: ConnectionPool;
  /** A longer answer is refused as unexpected. (Default: 4 MiB; XMLlicenseInfo 64 MiB, it grows with the book) */
  maxAnswerBytes?: number;
}

/** Every answer keeps its body, secrets redacted, and Manage2's `reason`. */
export interface Manage2Answer {
  reason: string;
  raw: unknown;
}

export interface LicenseAddAnswer extends Manage2Answer {
  licenseid: number;
  price?: number;
  monthly_price?: number;
  yearly?: boolean;
  promoinfo?: string;
}

export interface LicenseExpireAnswer extends Manage2Answer {
  licenseid?: number;
  /** "OK" when the licence expired; the page says "" means it did not (with `status` 1 still success). */
  result?: string;
}

export interface LicenseReActivateAnswer extends Manage2Answer {
  licenseid?: number;
  /** What this reactivation bills (the reactivation fee), when Manage2 says. */
  price?: number;
  monthly_price?: number;
}

export interface TransferAnswer extends Manage2Answer {
  oldip?: string;
  newip?: string;
}

export interface Manage2Client {
  /** Closes the client's own connections; a `pool` passed in is left to its owner. */
  close(): Promise<void>;
  /** Uses these from the next call on (SIGHUP after the password was changed); the old password stays scrubbed. */
  setCredentials(user: string, password: string): void;
  /** XMLlicenseAdd with `dryrun=0` and `legal=1`: adds (bills) a licence; `external_notes` at most 64 characters. */
  licenseAdd(input: z.input<typeof licenseAddInput>): Promise<LicenseAddAnswer>;
  /** XMLlicenseAdd with `dryrun=1`: what the add would cost, or why it would fail; nothing added. */
  licenseAddDryRun(input: z.input<typeof licenseAddInput>): Promise<Omit<LicenseAddAnswer, "licenseid">>;
  /** XMLlicenseExpire: ends the licence and its billing. */
  licenseExpire(input: z.input<typeof licenseExpireInput>): Promise<LicenseExpireAnswer>;
  /** XMLlicenseReActivate with `dryrun=0` unless asked: the same licence again (may bill a reactivation fee). */
  licenseReActivate(input: z.input<typeof licenseReActivateInput>): Promise<LicenseReActivateAnswer>;
  /** XMLtransfer of the one licence of `packageid` on `oldip` to `newip`. */
  transfer(input: z.input<typeof transferInput>): Promise<TransferAnswer>;
  /** XMLpackageUpdate: the licence on `ip` of `oldpackageid` becomes `newpackageid` (a partner may be refused). */
  packageUpdate(input: z.input<typeof packageUpdateInput>): Promise<Manage2Answer>;
  /** XMLlicenseInfo: active licences, or with `expired` the expired and suspended ones; never both in one call. */
  licenseInfo(input?: z.input<typeof licenseInfoInput>): Promise<Manage2License[]>;
  /** XMLlookup: the ids of the licences on an IP (all of them unless `all: false`). */
  lookup(input: z.input<typeof lookupInput>): Promise<number[]>;
  /** XMLRawlookup: the valid (active) licences on an IP, as records. */
  rawLookup(input: z.input<typeof lookupInput>): Promise<Manage2License[]>;
  /** XMLpackageInfo: the packages the account may buy. */
  packageInfo(): Promise<Manage2Named[]>;
  /** XMLgroupInfo: the account's groups. */
  groupInfo(): Promise<Manage2Named[]>;
  /** XMLupdateActiveLicenseMetadata: overwrites an active licence's `external_notes`. */
  updateActiveLicenseMetadata(input: z.input<typeof updateMetadataInput>): Promise<Manage2Answer>;
}

type Params = Record<string, string | number | undefined>;

export function createManage2Client(options: Manage2ClientOptions): Manage2Client {
  if (options.user.trim() === "" || options.password === "") throw new TypeError("manage2: user and password are required");
  const baseUrl = options.baseUrl ?? MANAGE2_DEFAULT_URL;
  const base = new URL(baseUrl).toString().replace(/\/+$/, "");
  const method = options.method ?? "POST";
  const transport = createTransport({
    token: options.password,
    timeoutMs: options.timeoutMs,
    logger: options.logger,
    retry: options.retry,
    pool: options.pool,
    maxAnswerBytes: options.maxAnswerBytes,
  });
  for (const credential of urlCredentials(baseUrl)) transport.addSecret(credential);

  let authorization = "";
  const useCredentials = (user: string, password: string): void => {
    const basic = Buffer.from(`${user}:${password}`, "utf8").toString("base64");
    transport.addSecret(password);
    // An upstream echoing our headers would quote the Basic form.
    transport.addSecret(basic);
    authorization = `Basic ${basic}`;
  };
  useCredentials(options.user, options.password);

  async function call(fn: string, params: Params, readOnly: boolean, maxAnswerBytes?: number) {
    const operation = `manage2.${fn}`;
    const url = new URL(`${base}/${fn}.cgi`);
    const form = new URLSearchParams({ output: "json" });
    for (const [key, value] of Object.entries(params)) if (value !== undefined) form.set(key, String(value));
    if (method === "GET") url.search = form.toString();
    let success: ReturnType<typeof manage2Success> | undefined;
    const answer = await observeCall(options.observer, operation, method, async () => {
      const a = await transport.send({
        operation,
        method,
        url,
        headers: { Authorization: authorization, Accept: "application/json" },
        readOnly,
        ...(method === "POST" ? { form } : {}),
        ...(maxAnswerBytes === undefined ? {} : { maxAnswerBytes }),
      });
      success = manage2Success(operation, a, readOnly);
      return a;
    });
    const { body, reason } = success!;
    return { answer, body, reason, raw: redactSecrets(answer.body) };
  }

  const listLimit = options.maxAnswerBytes ?? DEFAULT_LICENSE_LIST_MAX_ANSWER_BYTES;

  const add = (i: z.output<typeof licenseAddInput>, dryrun: boolean) =>
    call(
      "XMLlicenseAdd",
      {
        ip: i.ip,
        packageid: i.packageid,
        groupid: i.groupid,
        force: flag(i.force),
        reactivateok: flag(i.reactivateok),
        dryrun: flag(dryrun),
        external_notes: i.external_notes,
        legal: 1,
      },
      // A dry run changes nothing, so it may be asked again.
      dryrun,
    );

  return {
    close: () => transport.close(),
    setCredentials(user, password) {
      if (user.trim() === "" || password === "") throw new TypeError("manage2: user and password are required");
      useCredentials(user, password);
    },

    async licenseAdd(input) {
      const op = "manage2.XMLlicenseAdd";
      const a = await add(checkInput(op, licenseAddInput, input), false);
      // Without the id the licence is bought but unaddressable: UnexpectedAnswerError, maybe applied.
      return withOptional({ licenseid: readLicenseId(op, a.answer, a.body), reason: a.reason, raw: a.raw }, pricesOf(a.body));
    },

    async licenseAddDryRun(input) {
      const a = await add(checkInput("manage2.XMLlicenseAdd", licenseAddInput, input), true);
      return withOptional({ reason: a.reason, raw: a.raw }, pricesOf(a.body));
    },

    async licenseExpire(input) {
      const fn = "XMLlicenseExpire";
      const i = checkInput(`manage2.${fn}`, licenseExpireInput, input);
      const a = await call(fn, { liscid: i.liscid, reason: i.reason, expcode: i.expcode }, false);
      return withOptional({ reason: a.reason, raw: a.raw }, { licenseid: readNumber(a.body, "licenseid"), result: readText(a.body, "result") });
    },

    async licenseReActivate(input) {
      const fn = "XMLlicenseReActivate";
      const i = checkInput(`manage2.${fn}`, licenseReActivateInput, input);
      const a = await call(fn, { liscid: i.liscid, force: flag(i.force), dryrun: flag(i.dryrun) }, i.dryrun);
      return withOptional(
        { reason: a.reason, raw: a.raw },
        { licenseid: readNumber(a.body, "licenseid"), price: readNumber(a.body, "price"), monthly_price: readNumber(a.body, "monthly_price") },
      );
    },

    async transfer(input) {
      const fn = "XMLtransfer";
      const i = checkInput(`manage2.${fn}`, transferInput, input);
      const a = await call(fn, { oldip: i.oldip, newip: i.newip, packageid: i.packageid, force: flag(i.force), dryrun: flag(i.dryrun) }, i.dryrun);
      return withOptional({ reason: a.reason, raw: a.raw }, { oldip: readText(a.body, "oldip"), newip: readText(a.body, "newip") });
    },

    async packageUpdate(input) {
      const fn = "XMLpackageUpdate";
      const i = checkInput(`manage2.${fn}`, packageUpdateInput, input);
      const a = await call(fn, { ip: i.ip, newpackageid: i.newpackageid, oldpackageid: i.oldpackageid }, false);
      return { reason: a.reason, raw: a.raw };
    },

    async licenseInfo(input = {}) {
      const fn = "XMLlicenseInfo";
      const i = checkInput(`manage2.${fn}`, licenseInfoInput, input);
      const a = await found(call(fn, { expired: flag(i.expired), groupid: i.groupid, packageid: i.packageid, liscid: i.liscid }, true, listLimit));
      return a ? readLicenseInfo(`manage2.${fn}`, a.answer, a.body) : [];
    },

    async lookup(input) {
      const fn = "XMLlookup";
      const i = checkInput(`manage2.${fn}`, lookupInput, input);
      const a = await found(call(fn, { ip: i.ip, packageid: i.packageid, all: flag(i.all) }, true));
      return a ? readLookup(`manage2.${fn}`, a.answer, a.body) : [];
    },

    async rawLookup(input) {
      const fn = "XMLRawlookup";
      const i = checkInput(`manage2.${fn}`, lookupInput, input);
      const a = await found(call(fn, { ip: i.ip, packageid: i.packageid, all: flag(i.all) }, true));
      return a ? readRawLookup(`manage2.${fn}`, a.answer, a.body) : [];
    },

    async packageInfo() {
      const fn = "XMLpackageInfo";
      const a = await call(fn, {}, true);
      return readNamed(`manage2.${fn}`, a.answer, a.body, "packages");
    },

    async groupInfo() {
      const fn = "XMLgroupInfo";
      const a = await call(fn, {}, true);
      return readNamed(`manage2.${fn}`, a.answer, a.body, "groups");
    },

    async updateActiveLicenseMetadata(input) {
      const fn = "XMLupdateActiveLicenseMetadata";
      const i = checkInput(`manage2.${fn}`, updateMetadataInput, input);
      const a = await call(fn, { liscid: i.liscid, external_notes: i.external_notes }, false);
      return { reason: a.reason, raw: a.raw };
    },
  };
}

function pricesOf(body: Record<string, unknown>): { price?: number; monthly_price?: number; yearly?: boolean; promoinfo?: string } {
  return { price: readNumber(body, "price"), monthly_price: readNumber(body, "monthly_price"), yearly: yearlyOf(body.yearly), promoinfo: readText(body, "promoinfo") };
}

/**
 * A read that Manage2 answers with `status` 0 and words of "nothing there" ("Empty license." for
 * an unknown id; what a lookup of a bare IP answers is undocumented) found nothing: undefined.
 */
async function found<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof NotFoundError && error.status === 200) return undefined;
    throw error;
  }
}

/** `yearly` is documented as a Boolean, written 0/1 (or "0"/"1"). */
function yearlyOf(value: unknown): boolean | undefined {
  if (typeof value === "boolean") return value;
  if (value === 1 || value === "1") return true;
  if (value === 0 || value === "0") return false;
  return undefined;
}

/** Adds the fields that have a value, so absent ones are absent rather than `undefined`. */
function withOptional<T extends object, U extends Record<string, unknown>>(target: T, extra: U): T & Partial<U> {
  const out: Record<string, unknown> = { ...(target as Record<string, unknown>) };
  for (const [key, value] of Object.entries(extra)) if (value !== undefined) out[key] = value;
  return out as T & Partial<U>;
}
