import { createHash, timingSafeEqual } from "node:crypto";
import { ADMIN_TOKEN_ACTOR, type Actor } from "../vocabulary/roles.js";

/**
 * Who a login token belongs to, or undefined: the one function the console authenticates
 * through, passed in at composition. Named operators (OPERATORS_FILE, issue 26) give their own.
 */
export type OperatorResolver = (token: string) => Actor | undefined;

const sha256 = (s: string) => createHash("sha256").update(s).digest();

/**
 * Every ADMIN_TOKEN logs in as the admin named "admin". Both sides hashed, so each comparison is
 * constant-time whatever the lengths, and every token compared, so the time tells nothing.
 */
export function adminTokenResolver(tokens: readonly string[]): OperatorResolver {
  const digests = tokens.map(sha256);
  return (token) => {
    const given = sha256(token);
    let ok = false;
    for (const d of digests) ok = timingSafeEqual(given, d) || ok;
    return ok ? { name: ADMIN_TOKEN_ACTOR, role: "admin" } : undefined;
  };
}

/** A resolver over a fixed table of tokens (tests; a set-up that knows its operators). */
export function tableResolver(entries: readonly { token: string; actor: Actor }[]): OperatorResolver {
  const table = entries.map((e) => ({ digest: sha256(e.token), actor: e.actor }));
  return (token) => {
    const given = sha256(token);
    let found: Actor | undefined;
    for (const e of table) if (timingSafeEqual(given, e.digest) && !found) found = e.actor;
    return found ? { ...found } : undefined;
  };
}

/** The first resolver that knows the token. */
export function anyOf(...resolvers: OperatorResolver[]): OperatorResolver {
  return (token) => {
    let found: Actor | undefined;
    for (const r of resolvers) found ??= r(token);
    return found;
  };
}
