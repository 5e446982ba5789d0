import express, { type Request, type RequestHandler, type Response, type Router } from "express";
import { canonicalIp } from "../../vocabulary/ip-address.js";
import { clnTypeInfo, isClnType } from "../../vocabulary/cln-types.js";
import type { ClnSandboxAccount } from "../../vocabulary/cln-sandbox-identity.js";
import type { Logger } from "../../log/logger.js";
import type { FaultController } from "../faults.js";
import type { RequestLog } from "../request-log.js";
import { authenticate } from "./auth.js";
import type { ClnState } from "./state.js";
import { CLN_FAULT_WIRE, CLN_MESSAGES, type ClnWriter } from "./wire.js";

/**
 * CLN's IP licence API as the sandbox answers it: `GET /api/ipl/<operation>.json`, parameters and
 * `token` in the query string, every answer in the envelope (CloudLinux REST API, "IP-based
 * licenses API": availability, check, register, convert, remove, list, server; `update` and the
 * `.plain` variants are left out, the bridge uses neither).
 */

export interface ClnRouteContext {
  state: ClnState;
  requests: RequestLog<"cln">;
  faults: FaultController;
  writer: ClnWriter;
  accounts: () => readonly ClnSandboxAccount[];
  now: () => Date;
  tokenWindowSeconds: number;
  /** The next register's refusal, set by a test; consumed by the next register that passes its checks. */
  takeRegisterFailure: () => string | undefined;
  /** The refusal armed for the next remove, if any (`failNextRemove`). */
  takeRemoveFailure: () => string | undefined;
  logger: Logger;
}

type Query = Record<string, unknown>;
type Handler = (login: string, query: Query, res: Response) => void;

/** `ok` with the value, or the refusal's text. */
type Checked<T> = { ok: true; value: T } | { ok: false; message: string };

const ARRIVED = Symbol("arrived");

export function clnRoutes(ctx: ClnRouteContext): Router {
  const router = express.Router({ caseSensitive: true });
  const { state, writer } = ctx;

  const route = (op: string, mutating: boolean, handle: Handler): void => {
    const entry: RequestHandler[] = [
      // The token is judged by when the request came, not by when a held request is carried out.
      (req, _res, next) => {
        (req as Request & { [ARRIVED]?: Date })[ARRIVED] = ctx.now();
        next();
      },
      ctx.requests.recorder("cln", op),
      (req, res, next) => {
        res.on("finish", () => ctx.logger.debug({ via: "cln", op, status: res.statusCode }, "sandbox request"));
        next();
      },
      ctx.faults.middleware({
        via: CLN_FAULT_WIRE,
        mutating,
        onDrop: (req) => ctx.requests.markDropped(req),
        onHold: (req) => ctx.requests.markHeld(req),
      }),
    ];
    router.get(`/api/ipl/${op}.json`, ...entry, (req, res) => {
      const arrived = (req as Request & { [ARRIVED]?: Date })[ARRIVED] ?? ctx.now();
      const query = req.query as Query;
      const login = authenticate(query.token, ctx.accounts(), arrived, ctx.tokenWindowSeconds);
      if (login === undefined) {
        writer.refuse(res, CLN_MESSAGES.notAuthorized);
        return;
      }
      handle(login, query, res);
    });
  };

  route("register", true, (login, q, res) => {
    const ip = ipOf(q);
    if (!ip.ok) return writer.refuse(res, ip.message);
    const type = typeOf(q, "type");
    if (!type.ok) return writer.refuse(res, type.message);
    const failure = ctx.takeRegisterFailure();
    if (failure !== undefined) return writer.refuse(res, failure);
    const outcome = state.register(login, ip.value, type.value);
    if (!outcome.ok) {
      const message =
        outcome.reason === "held_by_another"
          ? CLN_MESSAGES.heldByAnother(ip.value, type.value)
          : CLN_MESSAGES.excluded(ip.value, outcome.heldType, type.value);
      return writer.refuse(res, message);
    }
    writer.ok(res, writer.license(outcome.license));
  });

  route("remove", true, (login, q, res) => {
    const ip = ipOf(q);
    if (!ip.ok) return writer.refuse(res, ip.message);
    // "If empty - will remove licenses with all types".
    const type = q.type === undefined || q.type === "" ? undefined : typeOf(q, "type");
    if (type !== undefined && !type.ok) return writer.refuse(res, type.message);
    const failure = ctx.takeRemoveFailure();
    if (failure !== undefined) return writer.refuse(res, failure);
    writer.ok(res, state.remove(login, ip.value, type?.value));
  });

  route("convert", true, (login, q, res) => {
    const ip = ipOf(q);
    if (!ip.ok) return writer.refuse(res, ip.message);
    const type = typeOf(q, "type");
    if (!type.ok) return writer.refuse(res, type.message);
    const typeTo = typeOf(q, "type_to");
    if (!typeTo.ok) return writer.refuse(res, typeTo.message);
    // "Change Imunify IP license type … you can upgrade only to the Imunify360 IP license."
    const from = clnTypeInfo(type.value)?.product;
    if (from !== "imunify360" && from !== "imunifyav") return writer.refuse(res, CLN_MESSAGES.notImunify("type"));
    if (clnTypeInfo(typeTo.value)?.product !== "imunify360") return writer.refuse(res, CLN_MESSAGES.notImunify("type_to"));
    writer.ok(res, state.convert(login, ip.value, type.value, typeTo.value));
  });

  route("list", false, (login, _q, res) => {
    writer.ok(res, writer.list(state.holdings(login).map((h) => writer.license(h))));
  });

  route("check", false, (_login, q, res) => {
    const ip = ipOf(q);
    if (!ip.ok) return writer.refuse(res, ip.message);
    writer.ok(res, writer.list(state.typesOn(ip.value).map((t) => writer.type(t))));
  });

  route("server", false, (login, q, res) => {
    if (typeof q.ip !== "string" || q.ip.trim() === "") return writer.refuse(res, CLN_MESSAGES.missing("ip"));
    const given = q.ip.split(",").map((s) => s.trim());
    if (given.length > 100) return writer.refuse(res, CLN_MESSAGES.tooManyIps);
    const ips: string[] = [];
    for (const text of given) {
      const ip = canonicalIp(text);
      if (ip === undefined) return writer.refuse(res, CLN_MESSAGES.invalidIp(text));
      ips.push(ip);
    }
    writer.ok(res, writer.list(state.holdingsOn(login, ips).map((h) => writer.serverLicense(h))));
  });

  route("availability", false, (login, q, res) => {
    const ip = ipOf(q);
    if (!ip.ok) return writer.refuse(res, ip.message);
    const { available, owned } = state.availability(login, ip.value);
    writer.ok(res, { available: available.map((t) => writer.type(t)), owned: owned.map((t) => writer.type(t)) });
  });

  return router;
}

function ipOf(q: Query): Checked<string> {
  const text = q.ip;
  if (typeof text !== "string" || text.trim() === "") return { ok: false, message: CLN_MESSAGES.missing("ip") };
  const ip = canonicalIp(text);
  return ip === undefined ? { ok: false, message: CLN_MESSAGES.invalidIp(text) } : { ok: true, value: ip };
}

function typeOf(q: Query, name: "type" | "type_to"): Checked<number> {
  const text = q[name];
  if (typeof text !== "string" || text.trim() === "") return { ok: false, message: CLN_MESSAGES.missing(name) };
  const type = /^\d{1,9}$/.test(text.trim()) ? Number(text.trim()) : NaN;
  return isClnType(type) ? { ok: true, value: type } : { ok: false, message: CLN_MESSAGES.invalidType(name, text) };
}
