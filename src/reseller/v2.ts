import { z } from "zod";
import type { Logger } from "../log/logger.js";
import { readV2Answer } from "./answers.js";
import { checkInput } from "./input.js";
import { redactSecrets } from "./redact.js";
import { urlCredentials } from "../log/url-credentials.js";
import type { ConnectionPool } from "./connection-pool.js";
import { createTransport, observeCall, type RetryOptions, type UpstreamObserver } from "./transport.js";
import { billingCycleMonthsSchema, coreSchema, ipSchema, productTypeSchema } from "../vocabulary/products.js";

/**
 * The reseller's legacy "v2.0" interface: every parameter, the token included, in the query
 * string, for GET and POST alike; answers are `{"ok":"True"|"False","message"}` at HTTP 200.
 */

export interface V2ClientOptions {
  /** The legacy base URL; paths below it are `/rc/...` and `/ChangeCore.php`. */
  baseUrl: string;
  /** Sent as the `token` query parameter; scrubbed from every log line and error. */
  token: string;
  /** The upstream accepts both. (Default: "GET") */
  method?: "GET" | "POST";
  /** Per attempt. (Default: 10000) */
  timeoutMs?: number;
  /** (Default: silent) */
  logger?: Logger;
  /** Only requests that never left are retried: every v2 call charges or changes. */
  retry?: Partial<RetryOptions>;
  /** Told how every call ended (operation, status, outcome, duration), e.g. for metrics. (Default: none) */
  observer?: UpstreamObserver;
  /** Kept-alive connections shared with other clients; whoever created it closes it. (Default: the client's own, closed by `close()`) */
  pool?: ConnectionPool;
  /** A longer answer is refused as unexpected. (Default: 4 MiB) */
  maxAnswerBytes?: number;
}

const termInput = z.object({
  ip: ipSchema,
  type: productTypeSchema,
  // The vendor reads it as months; optional because the documented interface omits it.
  billingcycle: billingCycleMonthsSchema.optional(),
});
const changeIpInput = z.object({ ip: ipSchema, type: productTypeSchema, newip: ipSchema });
const changeCoreInput = z.object({ ip: ipSchema, core: coreSchema });

export interface V2Answer {
  /** The upstream's `message`, e.g. "License registered". */
  message: string;
  raw: unknown;
}

export interface V2Client {
  /** Closes the client's own connections; a `pool` passed in is left to its owner. */
  close(): Promise<void>;
  /** Uses `token` from the next call on (SIGHUP after the reseller's token was rotated). */
  setToken(token: string): void;
  register(input: z.input<typeof termInput>): Promise<V2Answer>;
  renew(input: z.input<typeof termInput>): Promise<V2Answer>;
  changeIp(input: z.input<typeof changeIpInput>): Promise<V2Answer>;
  /** `core` 2, 4, 8 or 9 (XCore); see CORE_BY_VARIANT. */
  changeCore(input: z.input<typeof changeCoreInput>): Promise<V2Answer>;
}

export function createV2Client(options: V2ClientOptions): V2Client {
  if (options.token.trim() === "") throw new TypeError("reseller v2: token is empty");
  const base = new URL(options.baseUrl).toString().replace(/\/+$/, "");
  const method = options.method ?? "GET";
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

  let token = options.token;

  async function call(operation: string, path: string, params: Record<string, string | number | undefined>): Promise<V2Answer> {
    const url = new URL(base + path);
    url.searchParams.set("token", token);
    for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, String(value));
    let message = "";
    const answer = await observeCall(options.observer, operation, method, async () => {
      const a = await transport.send({ operation, method, url, readOnly: false });
      ({ message } = readV2Answer(operation, a));
      return a;
    });
    return { message, raw: redactSecrets(answer.body) };
  }

  return {
    close: () => transport.close(),
    setToken(next) {
      if (next.trim() === "") throw new TypeError("reseller v2: token is empty");
      transport.addSecret(next);
      token = next;
    },

    async register(input) {
      const op = "v2.register";
      const { ip, type, billingcycle } = checkInput(op, termInput, input);
      return call(op, "/rc/license.php", { ip, type, billingcycle });
    },

    async renew(input) {
      const op = "v2.renew";
      const { ip, type, billingcycle } = checkInput(op, termInput, input);
      return call(op, "/rc/ReNew.php", { ip, type, billingcycle });
    },

    async changeIp(input) {
      const op = "v2.changeIp";
      const { ip, type, newip } = checkInput(op, changeIpInput, input);
      return call(op, "/rc/ChangeIp.php", { ip, type, newip });
    },

    async changeCore(input) {
      const op = "v2.changeCore";
      const { ip, core } = checkInput(op, changeCoreInput, input);
      // No /rc prefix on this one path, as the vendor publishes it.
      return call(op, "/ChangeCore.php", { ip, core });
    },
  };
}
