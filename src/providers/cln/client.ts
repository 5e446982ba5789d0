import { z } from "zod";
import { systemClock, type Clock } from "../../clock.js";
import type { Logger } from "../../log/logger.js";
import { urlCredentials } from "../../log/url-credentials.js";
import type { ConnectionPool } from "../../reseller/connection-pool.js";
import { checkInput } from "../../reseller/input.js";
import { createTransport, DEFAULT_LICENSE_LIST_MAX_ANSWER_BYTES, observeCall, type Answer, type RetryOptions, type UpstreamObserver } from "../../reseller/transport.js";
import { UnexpectedAnswerError } from "../../reseller/errors.js";
import { redactSecrets } from "../../reseller/redact.js";
import { canConvert, isClnType } from "../../vocabulary/cln-types.js";
import { sameIp } from "../../vocabulary/ip-address.js";
import { ipSchema } from "../../vocabulary/products.js";
import { clnData, readData, readEnvelope, type ClnAvailability, type ClnLicense, type ClnServerLicense } from "./answers.js";
import { clnToken } from "./token.js";

/**
 * The typed client of CloudLinux CLN's IP licence API: `GET {base}/api/ipl/<operation>.json`,
 * parameters in the query string, a fresh `token` on every call, the `{success, data, message}`
 * envelope (CloudLinux REST API, docs.cloudlinux.com/cloudlinux_rest_api.pdf, "IP-based licenses
 * API"; cloudlinux/cloudlinux-whmcs-plugin classes/api/IPBased.php for how CloudLinux calls it).
 * Over the reseller's transport: its timeouts, kept-alive connections, retries of reads only,
 * scrubbing and log lines. Errors are the reseller client's (reseller/errors.ts), operations
 * named `cln.<operation>`. The secret key, each token and its hash are scrubbed from every log
 * line, error and logged URL.
 */

export const DEFAULT_CLN_URL = "https://cln.cloudlinux.com";

export interface ClnClientOptions {
  /** Where `/api/ipl/...` lives. (Default: https://cln.cloudlinux.com) */
  baseUrl?: string;
  /** The CLN account's login. */
  login: string;
  /** The account's secret key (CLN's account settings); never sent, only hashed into each token. */
  secretKey: string;
  /** The time each token carries. (Default: the system clock) */
  clock?: Clock;
  /** Per attempt. (Default: 10000) */
  timeoutMs?: number;
  /** (Default: silent) */
  logger?: Logger;
  /** Reads only (list, check, server, availability); a register, remove or convert is sent once. */
  retry?: Partial<RetryOptions>;
  /** Told how every call ended, e.g. for metrics. (Default: none) */
  observer?: UpstreamObserver;
  /** Kept-alive connections shared with other clients; whoever created it closes it. (Default: the client's own) */
  pool?: ConnectionPool;
  /** A longer answer is refused as unexpected; the licence list may take 64 MiB. (Default: 4 MiB) */
  maxAnswerBytes?: number;
}

const clnTypeSchema = z
  .number({ error: "must be a CLN licence type number" })
  .int({ error: "must be a CLN licence type number" })
  .refine(isClnType, { error: "is not a CLN IP licence type (see CLN_TYPES)" });

const licenseInput = z.strictObject({ ip: ipSchema, type: clnTypeSchema });
const ipInput = z.strictObject({ ip: ipSchema });
const serverInput = z.strictObject({
  ips: z
    .array(ipSchema)
    .min(1, { error: "must name at least one IP" })
    .max(100, { error: "takes up to 100 IPs (CLN's limit)" }),
});
const convertInput = z
  .strictObject({ ip: ipSchema, type: clnTypeSchema, typeTo: clnTypeSchema })
  .refine((i) => canConvert(i.type, i.typeTo), {
    error: "must be an Imunify360 type other than type: CLN converts Imunify licences into Imunify360 ones only",
    path: ["typeTo"],
  });

/** The licence to register, remove or look for: CLN's identity of a licence is (ip, type). */
export type ClnLicenseInput = z.input<typeof licenseInput>;

export interface ClnRemoval {
  /** false: CLN found no such licence of ours ("not found OR not owned by user"); nothing was removed. */
  removed: boolean;
}

export interface ClnConversion {
  /** false: CLN did not convert ("not found, not owned by user etc."); the old licence stands. */
  converted: boolean;
}

export interface ClnClient {
  /**
   * Registers the IP licence (a purchase), or answers the one this account already holds there:
   * CLN "returns information about created or already registered license", so a register sent
   * again after a lost answer buys nothing twice. Which of the two it was, CLN does not say.
   */
  register(input: ClnLicenseInput): Promise<ClnLicense>;
  /** Removes the licence of that type on that IP, which ends its billing. */
  remove(input: ClnLicenseInput): Promise<ClnRemoval>;
  /** CLN's `remove` without a type: every type this account holds on the IP. */
  removeAllTypes(input: { ip: string }): Promise<ClnRemoval>;
  /** Every IP licence of this account (no expiry, no status: CLN's list has none). */
  list(): Promise<ClnLicense[]>;
  /** The types registered on the IP by anyone, this account or another. */
  check(input: { ip: string }): Promise<number[]>;
  /** This account's licences on up to 100 IPs, with the server that checked in with each. */
  server(input: { ips: string[] }): Promise<ClnServerLicense[]>;
  /** This account's licence of that type on that IP, if it holds one (from `server`). */
  find(input: ClnLicenseInput): Promise<ClnServerLicense | undefined>;
  /** Which types can still be registered on the IP, and which this account holds there. */
  availability(input: { ip: string }): Promise<ClnAvailability>;
  /** Changes an Imunify licence into an Imunify360 tier in place (`type_to`). */
  convert(input: z.input<typeof convertInput>): Promise<ClnConversion>;
  /** Signs the next calls with these (SIGHUP after the key was changed in CLN); the old key stays scrubbed. */
  setCredentials(login: string, secretKey: string): void;
  /** Closes the client's own connections; a `pool` passed in is left to its owner. */
  close(): Promise<void>;
}

type Operation = "register" | "remove" | "list" | "check" | "server" | "availability" | "convert";

/** Throws when the login or key cannot sign a token. */
function checkCredentials(login: string, secretKey: string): void {
  if (login.trim() === "") throw new TypeError("cln: login is empty");
  // The token is three fields joined by "|": a login holding one could not be told apart.
  if (login.includes("|")) throw new TypeError("cln: login must not contain |");
  if (secretKey.trim() === "") throw new TypeError("cln: secret key is empty");
}

export function createClnClient(options: ClnClientOptions): ClnClient {
  checkCredentials(options.login, options.secretKey);
  let { login, secretKey } = options;
  const base = new URL(options.baseUrl ?? DEFAULT_CLN_URL).toString().replace(/\/+$/, "");
  const clock = options.clock ?? systemClock;
  const transport = createTransport({
    token: options.secretKey,
    timeoutMs: options.timeoutMs,
    logger: options.logger,
    retry: options.retry,
    pool: options.pool,
    maxAnswerBytes: options.maxAnswerBytes,
  });
  for (const credential of urlCredentials(base)) transport.addSecret(credential);

  /** One call; `data` of its answer through `read`, or the error the answer stands for. */
  async function call<T>(op: Operation, params: Record<string, string | number>, read: (answer: Answer, data: unknown) => T): Promise<T> {
    const operation = `cln.${op}`;
    const change = op === "register" || op === "remove" || op === "convert";
    const url = new URL(`${base}/api/ipl/${op}.json`);
    for (const [key, value] of Object.entries(params)) url.searchParams.set(key, String(value));
    const { token, hash } = clnToken(login, secretKey, Math.floor(clock.now() / 1000));
    url.searchParams.set("token", token);
    let result: T | undefined;
    await observeCall(options.observer, operation, "GET", async () => {
      const answer = await transport.send({
        operation,
        method: "GET",
        url,
        readOnly: !change,
        secrets: [token, hash],
        ...(op === "list" ? { maxAnswerBytes: options.maxAnswerBytes ?? DEFAULT_LICENSE_LIST_MAX_ANSWER_BYTES } : {}),
      });
      result = read(answer, readEnvelope(operation, answer, change));
      return answer;
    });
    return result as T;
  }

  async function server(input: { ips: string[] }): Promise<ClnServerLicense[]> {
    const op = "cln.server";
    const { ips } = checkInput(op, serverInput, input);
    return call("server", { ip: [...new Set(ips)].join(",") }, (answer, data) => readData(op, answer, data, clnData.serverLicenses, false));
  }

  const removal = (operation: string) => (answer: Answer, data: unknown): ClnRemoval => ({ removed: readData(operation, answer, data, clnData.flag, true) });

  return {
    async register(input) {
      const op = "cln.register";
      const { ip, type } = checkInput(op, licenseInput, input);
      return call("register", { ip, type }, (answer, data) => {
        const license = readData(op, answer, data, clnData.license, true);
        // Money first: a licence other than the one asked for is no proof of this purchase.
        if (!sameIp(license.ip, ip) || license.type !== type) {
          throw new UnexpectedAnswerError({
            operation: op,
            status: answer.status,
            message: `${op}: answered licence ${license.ip} type ${license.type}, not ${ip} type ${type}`,
            raw: redactSecrets(answer.body),
            mayHaveTakenEffect: true,
          });
        }
        return license;
      });
    },

    async remove(input) {
      const op = "cln.remove";
      const { ip, type } = checkInput(op, licenseInput, input);
      return call("remove", { ip, type }, removal(op));
    },

    async removeAllTypes(input) {
      const op = "cln.remove";
      const { ip } = checkInput(op, ipInput, input);
      return call("remove", { ip }, removal(op));
    },

    async list() {
      return call("list", {}, (answer, data) => readData("cln.list", answer, data, clnData.licenses, false));
    },

    async check(input) {
      const op = "cln.check";
      const { ip } = checkInput(op, ipInput, input);
      return call("check", { ip }, (answer, data) => readData(op, answer, data, clnData.types, false));
    },

    server,

    async find(input) {
      const { ip, type } = checkInput("cln.server", licenseInput, input);
      const held = await server({ ips: [ip] });
      return held.find((l) => sameIp(l.ip, ip) && l.type === type);
    },

    async availability(input) {
      const op = "cln.availability";
      const { ip } = checkInput(op, ipInput, input);
      return call("availability", { ip }, (answer, data) => readData(op, answer, data, clnData.availability, false));
    },

    async convert(input) {
      const op = "cln.convert";
      const { ip, type, typeTo } = checkInput(op, convertInput, input);
      return call("convert", { ip, type, type_to: typeTo }, (answer, data) => ({ converted: readData(op, answer, data, clnData.flag, true) }));
    },

    setCredentials(nextLogin, nextKey) {
      checkCredentials(nextLogin, nextKey);
      transport.addSecret(nextKey);
      login = nextLogin;
      secretKey = nextKey;
    },

    close: () => transport.close(),
  };
}
