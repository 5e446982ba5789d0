import { createHash, timingSafeEqual } from "node:crypto";
import type { RequestHandler, Response } from "express";
import { ADMIN_TOKEN_ACTOR, type Actor, type Role } from "../vocabulary/roles.js";
import { sendError } from "./errors.js";
import { tooManyFailures, type FailureLimit } from "./failure-limit.js";

const sha256 = (s: string) => createHash("sha256").update(s).digest();

/** The bearer token of a request, or undefined when there is none. */
function bearerOf(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(header ?? "");
  return match?.[1]?.trim();
}

/**
 * Bearer-token guard accepting any of `tokens` (several while one is rotated); hashes both sides
 * so each comparison is constant-time whatever the lengths, and compares with every token, so the
 * time does not tell which one matched. The 401 is sendError's, which each API shapes itself (the
 * provisioning API's `success: false`).
 */
export function requireBearer(tokens: string | readonly string[], realm = "admin"): RequestHandler {
  const expected = (typeof tokens === "string" ? [tokens] : tokens).map(sha256);
  return (req, res, next) => {
    const token = bearerOf(req.headers.authorization);
    const given = sha256(token ?? "");
    let ok = false;
    for (const e of expected) ok = timingSafeEqual(given, e) || ok;
    if (token === undefined || !ok) {
      res.setHeader("WWW-Authenticate", `Bearer realm="license-bridge ${realm}"`);
      return sendError(res, 401, "unauthorized", `Unauthorized: send Authorization: Bearer <${realm === "admin" ? "ADMIN_TOKEN" : "PROVISIONING_TOKEN"}>`);
    }
    next();
  };
}

/** An operator as OPERATORS_FILE lists them (src/config/operators.ts): the token only as its SHA-256. */
export interface OperatorCredential {
  name: string;
  role: Role;
  token_sha256: string;
}

/** Who a token belongs to: every ADMIN_TOKEN (the admin named "admin") and every operator. */
export interface OperatorDirectory {
  identify(token: string): Actor | undefined;
  /** The operator of that name as the directory has them now (their role may have changed), or undefined when gone. */
  named(name: string): Actor | undefined;
  /**
   * A value that changes whenever the operator's tokens or role do (undefined when gone): a
   * reload that changes it ends their console sessions, so a rotated token logs no one in.
   * A digest of hashes, never a token.
   */
  credentialOf(name: string): string | undefined;
  /** Every operator's name, "admin" included when ADMIN_TOKEN is set. */
  names(): string[];
}

/**
 * The directory of ADMIN_TOKEN's tokens and OPERATORS_FILE's operators. A token is hashed once
 * and compared with every entry in constant time, all of them whatever matched, so neither the
 * time nor the order tells which entry it was; no token is kept in clear beyond ADMIN_TOKEN's own
 * (hashed here too).
 */
export function operatorDirectory(adminTokens: readonly string[], operators: readonly OperatorCredential[] = []): OperatorDirectory {
  const entries = [
    ...adminTokens.map((t) => ({ actor: { name: ADMIN_TOKEN_ACTOR, role: "admin" as Role }, digest: sha256(t) })),
    ...operators.map((o) => ({ actor: { name: o.name, role: o.role }, digest: Buffer.from(o.token_sha256, "hex") })),
  ].filter((e) => e.digest.length === 32);
  const byName = new Map<string, { actor: Actor; digests: string[] }>();
  for (const e of entries) {
    const known = byName.get(e.actor.name) ?? { actor: e.actor, digests: [] };
    known.digests.push(e.digest.toString("hex"));
    byName.set(e.actor.name, known);
  }
  return {
    identify(token) {
      const given = sha256(token);
      let found: Actor | undefined;
      for (const e of entries) if (timingSafeEqual(given, e.digest) && !found) found = e.actor;
      return found ? { ...found } : undefined;
    },
    named(name) {
      const known = byName.get(name);
      return known ? { ...known.actor } : undefined;
    },
    names: () => [...byName.keys()],
    credentialOf(name) {
      const known = byName.get(name);
      return known ? createHash("sha256").update([known.actor.role, ...[...known.digests].sort()].join("\n")).digest("hex") : undefined;
    },
  };
}

/** The operator a request was authenticated as (set by `authenticate`). */
export function operatorOf(res: Response): Actor | undefined {
  return res.locals.operator as Actor | undefined;
}

/** 429 with Retry-After and when to try again, for a client the failure limit refuses now. */
export function sendTooManyFailures(res: Response, retryAfterSeconds: number): void {
  res.setHeader("Retry-After", String(retryAfterSeconds));
  sendError(res, 429, "too_many_failures", tooManyFailures(retryAfterSeconds), { retry_after_seconds: retryAfterSeconds });
}

/**
 * The admin API's authentication: `Authorization: Bearer <ADMIN_TOKEN or an operator's token>`,
 * else 401. Sets `res.locals.operator` ({name, role}) for the role checks and the audit trail.
 * With `failures`, a bearer token that is nobody's counts against the client (`req.ip`: the
 * socket's address, or the one a trusted proxy forwards), and a client over the limit is refused
 * with 429 whatever it sends. A request without a bearer token guesses nothing and is not counted.
 */
export function authenticate(directory: OperatorDirectory, failures?: FailureLimit): RequestHandler {
  return (req, res, next) => {
    if (operatorOf(res)) return next();
    const wait = failures?.refused(req.ip);
    if (wait !== undefined) return sendTooManyFailures(res, wait);
    const token = bearerOf(req.headers.authorization);
    const actor = token === undefined ? undefined : directory.identify(token);
    if (!actor) {
      if (token !== undefined) failures?.failed(req.ip);
      res.setHeader("WWW-Authenticate", 'Bearer realm="license-bridge admin"');
      return sendError(res, 401, "unauthorized", "Unauthorized: send Authorization: Bearer <ADMIN_TOKEN or an operator's token (OPERATORS_FILE)>");
    }
    res.locals.operator = actor;
    next();
  };
}

/**
 * The audit entry's who and what for the request's operator: hand it to the store operation that
 * makes the change (e.g. `store.jobs.retry(id, auditFor(res, "job.retry"))`), which writes the
 * entry in the change's own transaction.
 */
export function auditFor(res: Response, action: string, detail?: string | null): { actor: string; action: string; detail?: string | null } {
  const actor = operatorOf(res);
  if (!actor) throw new Error("auditFor: the request was not authenticated (authenticate() must run first)");
  return { actor: actor.name, action, ...(detail === undefined ? {} : { detail }) };
}
