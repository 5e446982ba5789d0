import { z } from "zod";
import type { Logger } from "../log/logger.js";
import {
  readBundleKey,
  readBundleStatus,
  readExpiresAt,
  readInstallCommand,
  licensesAtOf,
  readLicenseList,
  listedOf,
  readListedLicenses,
  readNumber,
  readSubResellerList,
  readText,
  v1Success,
  type ListedLicense,
  type SubReseller,
  type UpstreamLicense,
} from "./answers.js";
import { checkInput } from "./input.js";
import { redactSecrets } from "./redact.js";
import { urlCredentials } from "../log/url-credentials.js";
import type { ConnectionPool } from "./connection-pool.js";
import { listJsonStream, type Keep } from "./list-json.js";
import { createTransport, DEFAULT_LICENSE_LIST_MAX_ANSWER_BYTES, observeCall, type Answer, type Call, type RetryOptions, type UpstreamObserver } from "./transport.js";
import {
  billingCycleMonthsSchema,
  bundleIdSchema,
  ipSchema,
  litespeedVariantSchema,
  positiveAmountSchema,
  productTypeSchema,
} from "../vocabulary/products.js";

/** The reseller's JSON interface (reseller-api.md, "Version 1 interface"). */

export interface V1ClientOptions {
  /** Ends with `/api/v1`. */
  baseUrl: string;
  /** Bearer token; never logged. */
  token: string;
  /** Per attempt. (Default: 10000) */
  timeoutMs?: number;
  /** Every call is logged at debug level, token scrubbed. (Default: silent) */
  logger?: Logger;
  /** Retries of reads and of requests that never left. (Default: 2 retries from 250 ms) */
  retry?: Partial<RetryOptions>;
  /** Told how every call ended (operation, status, outcome, duration), e.g. for metrics. (Default: none) */
  observer?: UpstreamObserver;
  /** Kept-alive connections shared with other clients; whoever created it closes it. (Default: the client's own, closed by `close()`) */
  pool?: ConnectionPool;
  /** A longer answer is refused as unexpected. (Default: 4 MiB; the licence list 64 MiB, it grows with the book) */
  maxAnswerBytes?: number;
}

const licenseRef = z.object({ ip: ipSchema, type: productTypeSchema });
const licenseTerm = licenseRef.extend({ billingcycle: billingCycleMonthsSchema });
const changeIpInput = licenseRef.extend({ newip: ipSchema });
const changeCoreInput = z.object({ ip: ipSchema, old_type: litespeedVariantSchema, new_type: litespeedVariantSchema });
const bundleInput = z.object({ ip: ipSchema, bundle: bundleIdSchema, billingcycle: billingCycleMonthsSchema });
const bundleStatusInput = z.object({ bundle_key: z.string().trim().min(1).max(200) });
const nonNegative = z.number().finite().min(0, { error: "must be zero or more" });
const subResellerInput = z.object({
  name: z.string().trim().min(1),
  email: z.email(),
  password: z.string().min(1),
  role: z.string().min(1).default("sub_reseller"),
  commission_rate: nonNegative,
});
const resellerInput = z.object({
  name: z.string().trim().min(1),
  email: z.email(),
  password: z.string().min(1),
  role: z.string().min(1).default("reseller"),
  balance: nonNegative,
  domain: z.string().trim().min(1).max(253),
  commission: nonNegative,
});
const idInput = z.object({ id: z.union([z.string().trim().min(1), z.number().int().nonnegative()]).transform(String) });
const creditInput = z.object({ amount: positiveAmountSchema });
const resellerCreditInput = z.object({ amount: positiveAmountSchema, description: z.string().trim().min(1).max(500) });

/** Every answer keeps its body, secrets redacted, for the history and for debugging. */
export interface RawAnswer {
  raw: unknown;
}
export interface TermAnswer extends RawAnswer {
  /** When the upstream term ends, if the answer says. */
  expires_at?: string;
}
export interface BundleAnswer extends TermAnswer {
  bundle_key: string;
}
export interface BundleStatusAnswer extends TermAnswer {
  status?: string;
}
export interface BalanceAnswer extends RawAnswer {
  balance?: number;
}

export interface V1Client {
  /** Closes the client's own connections; a `pool` passed in is left to its owner. */
  close(): Promise<void>;
  /** Uses `token` from the next call on (SIGHUP after the reseller's token was rotated). */
  setToken(token: string): void;
  installCommand(input: z.input<typeof licenseRef>): Promise<{ command: string; raw: unknown }>;
  listLicenses(): Promise<UpstreamLicense[]>;
  /** The same list as compact records (what reconcile and the adoption plan compare), each item's other keys dropped as it is read. */
  listedLicenses(): Promise<ListedLicense[]>;
  /** The licences of the same list at one IP (in any spelling), as listLicenses has them; every other item dropped as it is read. */
  licensesAt(ip: string): Promise<UpstreamLicense[]>;
  register(input: z.input<typeof licenseTerm>): Promise<TermAnswer>;
  renew(input: z.input<typeof licenseTerm>): Promise<TermAnswer>;
  suspend(input: z.input<typeof licenseRef>): Promise<RawAnswer>;
  unsuspend(input: z.input<typeof licenseRef>): Promise<RawAnswer>;
  changeIp(input: z.input<typeof changeIpInput>): Promise<RawAnswer>;
  /** Moves a litespeed licence between core variants; the licence stays `type: "litespeed"`. */
  changeCore(input: z.input<typeof changeCoreInput>): Promise<RawAnswer>;
  registerBundle(input: z.input<typeof bundleInput>): Promise<BundleAnswer>;
  bundleStatus(input: z.input<typeof bundleStatusInput>): Promise<BundleStatusAnswer>;
  listSubResellers(): Promise<SubReseller[]>;
  createSubReseller(input: z.input<typeof subResellerInput>): Promise<RawAnswer & { id?: string }>;
  creditSubReseller(id: string | number, input: z.input<typeof creditInput>): Promise<BalanceAnswer>;
  /** Admin: needs an admin token, else ForbiddenError. */
  createReseller(input: z.input<typeof resellerInput>): Promise<RawAnswer & { id?: string; token?: string }>;
  resellerBalance(id: string | number): Promise<BalanceAnswer>;
  creditReseller(id: string | number, input: z.input<typeof resellerCreditInput>): Promise<BalanceAnswer>;
}

export function createV1Client(options: V1ClientOptions): V1Client {
  if (options.token.trim() === "") throw new TypeError("reseller v1: token is empty");
  const base = new URL(options.baseUrl).toString().replace(/\/+$/, "");
  const transport = createTransport({
    token: options.token,
    timeoutMs: options.timeoutMs,
    logger: options.logger,
    retry: options.retry,
    pool: options.pool,
    maxAnswerBytes: options.maxAnswerBytes,
  });
  // Basic auth in the base URL: scrubbed like the token, should an answer or an error quote it.
  for (const credential of urlCredentials(options.baseUrl)) transport.addSecret(credential);
  const headers = {
    Authorization: `Bearer ${options.token}`,
    "Content-Type": "application/json",
    Accept: "application/json",
  };

  async function get(operation: string, path: string, query: Record<string, string> = {}, large: Pick<Call, "maxAnswerBytes" | "streamJson"> = {}): Promise<Answer> {
    const url = new URL(base + path);
    for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
    return observeCall(options.observer, operation, "GET", async () => {
      const answer = await transport.send({ operation, method: "GET", url, headers, readOnly: true, ...large });
      v1Success(operation, answer);
      return answer;
    });
  }

  // A limit set for the client holds for the list too; by default the list may be larger than any
  // other answer. It is parsed as it arrives, each item made what `keep` makes of it (the same
  // call whatever is kept: named alike in logs and metrics).
  const getLicenseList = (keep: Keep) =>
    get("v1.listLicenses", "/license/list", {}, {
      maxAnswerBytes: options.maxAnswerBytes ?? DEFAULT_LICENSE_LIST_MAX_ANSWER_BYTES,
      streamJson: () => listJsonStream(keep),
    });

  /** `readOnly` only for POSTs that merely look something up (bundle status). */
  async function post(operation: string, path: string, json: unknown, readOnly = false): Promise<Answer> {
    return observeCall(options.observer, operation, "POST", async () => {
      const answer = await transport.send({ operation, method: "POST", url: new URL(base + path), headers, json, readOnly });
      v1Success(operation, answer);
      return answer;
    });
  }

  const raw = (answer: Answer): unknown => redactSecrets(answer.body);
  const term = (answer: Answer): TermAnswer => withOptional({ raw: raw(answer) }, { expires_at: readExpiresAt(answer.body) });
  const balance = (answer: Answer): BalanceAnswer =>
    withOptional({ raw: raw(answer) }, { balance: readNumber(answer.body, ["balance", "new_balance"]) });
  const idPath = (operation: string, id: string | number): string => encodeURIComponent(checkInput(operation, idInput, { id }).id);

  return {
    close: () => transport.close(),
    setToken(token) {
      if (token.trim() === "") throw new TypeError("reseller v1: token is empty");
      transport.addSecret(token);
      headers.Authorization = `Bearer ${token}`;
    },

    async installCommand(input) {
      const op = "v1.installCommand";
      const { ip, type } = checkInput(op, licenseRef, input);
      const answer = await get(op, "/license/install-command", { ip, type });
      return { command: readInstallCommand(op, answer), raw: raw(answer) };
    },

    async listLicenses() {
      // Every item kept as it came, then read as a whole list.
      return readLicenseList("v1.listLicenses", await getLicenseList((item) => item));
    },

    async listedLicenses() {
      // Each item becomes its record as it is parsed: the answer's full tree is never built.
      return readListedLicenses("v1.listLicenses", await getLicenseList(listedOf));
    },

    async licensesAt(ip) {
      return readListedLicenses<UpstreamLicense>("v1.listLicenses", await getLicenseList(licensesAtOf(ip)));
    },

    async register(input) {
      const op = "v1.register";
      return term(await post(op, "/license/register", checkInput(op, licenseTerm, input)));
    },

    async renew(input) {
      const op = "v1.renew";
      return term(await post(op, "/license/renew", checkInput(op, licenseTerm, input)));
    },

    async suspend(input) {
      const op = "v1.suspend";
      return { raw: raw(await post(op, "/license/suspend", checkInput(op, licenseRef, input))) };
    },

    async unsuspend(input) {
      const op = "v1.unsuspend";
      return { raw: raw(await post(op, "/license/unsuspend", checkInput(op, licenseRef, input))) };
    },

    async changeIp(input) {
      const op = "v1.changeIp";
      return { raw: raw(await post(op, "/license/change-ip", checkInput(op, changeIpInput, input))) };
    },

    async changeCore(input) {
      const op = "v1.changeCore";
      return { raw: raw(await post(op, "/license/change-core", checkInput(op, changeCoreInput, input))) };
    },

    async registerBundle(input) {
      const op = "v1.registerBundle";
      const answer = await post(op, "/bundles", checkInput(op, bundleInput, input));
      // Without the key the bundle is bought but unaddressable: UnexpectedAnswerError,
      // flagged mayHaveTakenEffect, so the caller reconciles instead of buying again.
      const bundleKey = readBundleKey(op, answer);
      return withOptional({ bundle_key: bundleKey, raw: raw(answer) }, { expires_at: readExpiresAt(answer.body) });
    },

    async bundleStatus(input) {
      const op = "v1.bundleStatus";
      const answer = await post(op, "/bundles/status", checkInput(op, bundleStatusInput, input), true);
      return withOptional(term(answer), { status: readBundleStatus(answer.body) });
    },

    async listSubResellers() {
      const op = "v1.listSubResellers";
      return readSubResellerList(op, await get(op, "/sub-reseller"));
    },

    async createSubReseller(input) {
      const op = "v1.createSubReseller";
      const answer = await post(op, "/sub-reseller", checkInput(op, subResellerInput, input));
      return withOptional({ raw: raw(answer) }, { id: readText(answer.body, ["id", "sub_reseller_id", "user_id"]) });
    },

    async creditSubReseller(id, input) {
      const op = "v1.creditSubReseller";
      const path = `/sub-reseller/${idPath(op, id)}/credit`;
      return balance(await post(op, path, checkInput(op, creditInput, input)));
    },

    async createReseller(input) {
      const op = "v1.createReseller";
      const answer = await post(op, "/admin/reseller", checkInput(op, resellerInput, input));
      return withOptional(
        { raw: raw(answer) },
        {
          id: readText(answer.body, ["id", "reseller_id", "user_id"]),
          token: readText(answer.body, ["token", "api_token", "access_token"]),
        },
      );
    },

    async resellerBalance(id) {
      const op = "v1.resellerBalance";
      return balance(await get(op, `/admin/reseller/${idPath(op, id)}/balance`));
    },

    async creditReseller(id, input) {
      const op = "v1.creditReseller";
      const path = `/admin/reseller/${idPath(op, id)}/credit`;
      return balance(await post(op, path, checkInput(op, resellerCreditInput, input)));
    },
  };
}

/** Adds the fields that have a value, so absent ones are absent rather than `undefined`. */
function withOptional<T extends object, U extends Record<string, unknown>>(target: T, extra: U): T & Partial<U> {
  const out: Record<string, unknown> = { ...(target as Record<string, unknown>) };
  for (const [key, value] of Object.entries(extra)) if (value !== undefined) out[key] = value;
  return out as T & Partial<U>;
}
