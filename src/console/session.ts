import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Request, RequestHandler, Response } from "express";
import type { Clock } from "../clock.js";
import type { OperatorDirectory } from "../http/auth.js";
import { sendError } from "../http/errors.js";
import type { SessionOps } from "../store/store.js";
import type { Actor } from "../vocabulary/roles.js";

/** A session ends after 30 minutes without a request... */
export const SESSION_IDLE_MS = 30 * 60_000;
/** ...and 12 hours after its login, used or not: a working day, then the token again. */
export const SESSION_MAX_MS = 12 * 60 * 60_000;
/**
 * last_seen_at is written at most once a minute: pages are reads, and mostly stay that way. A
 * page whose write cannot be made now (another process holds SQLite's write lock, or the store
 * refuses writes) is shown without it: the idle limit then counts from the visit recorded
 * before, so a skipped write can end a session sooner, never later.
 */
const TOUCH_EVERY_MS = 60_000;

export const SESSION_COOKIE = "lb_console";
/** The login form's own CSRF value (double submit): there is no session to tie it to yet. */
export const LOGIN_COOKIE = "lb_console_login";

/** The session a console request runs in. */
export interface ConsoleSession {
  actor: Actor;
  /** The value every form of this session carries (csrf.ts). */
  csrf: string;
  /** The SHA-256 of its id: the store's key. */
  key: string;
}

const sha256hex = (s: string) => createHash("sha256").update(s).digest("hex");

/**
 * The session's CSRF token, derived from its id: no one without the cookie can compute it, and
 * nothing more is stored. A different derivation than the store key, so a leaked row gives no form.
 */
const csrfOf = (sessionId: string) => createHash("sha256").update(`csrf\0${sessionId}`).digest("base64url");

export function cookiesOf(req: Request): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const i = part.indexOf("=");
    if (i > 0) out[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  return out;
}

/** `HttpOnly; SameSite=Strict; Path=/console`, and `Secure` when the request came over HTTPS (TRUST_PROXY honoured). */
export function setCookie(req: Request, res: Response, name: string, value: string, maxAgeSeconds?: number): void {
  const attrs = [`${name}=${value}`, "Path=/console", "HttpOnly", "SameSite=Strict"];
  if (maxAgeSeconds !== undefined) attrs.push(`Max-Age=${maxAgeSeconds}`);
  if (req.secure) attrs.push("Secure");
  res.append("Set-Cookie", attrs.join("; "));
}

/** Constant-time equality of two strings (false when the lengths differ). */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export interface Sessions {
  /** Opens a session for `actor`: sets the cookie; expired sessions are deleted first. */
  open(req: Request, res: Response, actor: Actor): Promise<void>;
  /** Sets `res.locals.session` for a live session; otherwise to the login page (a GET) or 401 (anything else). */
  require: RequestHandler;
  /** Deletes the request's session and clears its cookie. */
  close(req: Request, res: Response): Promise<void>;
  /** A fresh value for the login form (set as a cookie too). */
  loginToken(req: Request, res: Response): string;
}

/**
 * `operators`: the directory of the running configuration. A session acts with the role its
 * operator has now, not the one they logged in with, and ends when they are no longer listed:
 * a reload (SIGHUP) that demotes or removes an operator takes effect on their next click.
 * `unwritable`: a store error that says no write can be made now (Store.isBusy, or a refusal).
 */
export function consoleSessions(store: SessionOps, clock: Clock, operators: Pick<OperatorDirectory, "named">, unwritable: (err: unknown) => boolean): Sessions {
  /** A write the request can do without: left undone while the store takes none, anything else thrown. */
  const unlessUnwritable = (write: Promise<unknown>) =>
    write.catch((err: unknown) => {
      if (!unwritable(err)) throw err;
    });
  return {
    async open(req, res, actor) {
      const now = clock.now();
      await store.deleteExpired(now - SESSION_IDLE_MS, now - SESSION_MAX_MS);
      const id = randomBytes(32).toString("base64url");
      await store.create(sha256hex(id), { operator: actor.name, role: actor.role, created_at: now, last_seen_at: now });
      setCookie(req, res, SESSION_COOKIE, id);
      setCookie(req, res, LOGIN_COOKIE, "", 0);
    },
    require: (req, res, next) => {
      void (async () => {
        const id = cookiesOf(req)[SESSION_COOKIE];
        const key = id ? sha256hex(id) : undefined;
        const row = key ? await store.get(key) : undefined;
        const now = clock.now();
        const actor = row ? operators.named(row.operator) : undefined;
        if (!id || !key || !row || !actor || now - row.last_seen_at > SESSION_IDLE_MS || now - row.created_at > SESSION_MAX_MS) {
          // Ended either way: a row left behind now is expired, and the next login deletes it.
          if (key && row) await unlessUnwritable(store.delete(key));
          if (req.method === "GET") return res.redirect(303, "/console/login");
          return sendError(res, 401, "unauthorized", "Your console session has ended: log in again.");
        }
        if (now - row.last_seen_at > TOUCH_EVERY_MS) {
          const touched = store.touch(key, now);
          // A page is shown without its visit recorded; a form that writes meets the store's refusal itself.
          await (req.method === "GET" ? unlessUnwritable(touched) : touched);
        }
        res.locals.session = { actor, csrf: csrfOf(id), key } satisfies ConsoleSession;
        next();
      })().catch(next);
    },
    async close(req, res) {
      const id = cookiesOf(req)[SESSION_COOKIE];
      if (id) await store.delete(sha256hex(id));
      setCookie(req, res, SESSION_COOKIE, "", 0);
    },
    loginToken(req, res) {
      const value = randomBytes(24).toString("base64url");
      setCookie(req, res, LOGIN_COOKIE, value);
      return value;
    },
  };
}

export function sessionOf(res: Response): ConsoleSession {
  return res.locals.session as ConsoleSession;
}
