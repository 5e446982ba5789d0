import { createHash } from "node:crypto";

/**
 * CLN's per-call credential: "login|timestamp|sha1(secret_key + timestamp)", the timestamp in
 * Unix seconds and the hash as 40 hex digits (CloudLinux REST API, "Authentication"; the same in
 * cloudlinux/cloudlinux-whmcs-plugin classes/api/ApiBase.php). How long a token stays valid is
 * not published, so one is made for every call, retries of a read aside.
 */

export interface ClnToken {
  /** The `token` query parameter. */
  token: string;
  /** Its hash alone, scrubbed as well: an upstream may quote it without the rest. */
  hash: string;
}

export function clnToken(login: string, secretKey: string, unixSeconds: number): ClnToken {
  const hash = createHash("sha1").update(`${secretKey}${unixSeconds}`).digest("hex");
  return { token: `${login}|${unixSeconds}|${hash}`, hash };
}
