import { createHash, timingSafeEqual } from "node:crypto";
import type { ClnSandboxAccount } from "../../vocabulary/cln-sandbox-identity.js";

/**
 * CLN's token check: "login|timestamp|sha1(secret_key + timestamp)" (CloudLinux REST API,
 * "Authentication"), written here apart from the client's, so that one mistake cannot pass both.
 * How far the timestamp may be from CLN's clock is not published; the sandbox takes
 * `windowSeconds` either way (5 minutes by default, the tolerance webhook signatures commonly
 * allow), measured when the request arrived.
 */

export const DEFAULT_TOKEN_WINDOW_SECONDS = 300;

/** The login the token proves, or undefined: unknown login, wrong hash, stale or malformed. */
export function authenticate(token: unknown, accounts: readonly ClnSandboxAccount[], arrivedAt: Date, windowSeconds: number): string | undefined {
  if (typeof token !== "string") return undefined;
  const parts = token.split("|");
  if (parts.length !== 3) return undefined;
  const [login, stamp, hash] = parts as [string, string, string];
  if (!/^\d{1,12}$/.test(stamp) || !/^[0-9a-f]{40}$/i.test(hash)) return undefined;
  const account = accounts.find((a) => a.login === login);
  if (!account) return undefined;
  const expected = createHash("sha1").update(account.secretKey + stamp).digest();
  if (!timingSafeEqual(expected, Buffer.from(hash, "hex"))) return undefined;
  const skew = Math.abs(arrivedAt.getTime() / 1000 - Number(stamp));
  return skew <= windowSeconds ? login : undefined;
}
