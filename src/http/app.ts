import express, { type Express, type Router } from "express";
import type { Logger } from "../log/logger.js";
import { errorHandler, sendError } from "./errors.js";
import { requestLog } from "./request-log.js";

export interface AppDeps {
  logger: Logger;
  /** Feature routers, mounted in order: health, metrics and the API document first, then webhooks and admin. */
  routers: Router[];
  /** Log one line per request. (Default: true) */
  logRequests?: boolean;
  /** A store error worth trying again soon (Store.isBusy): answered 503 with Retry-After. (Default: none) */
  isBusy?: (err: unknown) => boolean;
  /** The configured secrets: masked in any path or id a log line names, wherever they appear. (Default: none) */
  secrets?: readonly string[];
  /** SHA-256 (hex) of tokens known only by their hash (OPERATORS_FILE's): masked in the same places. (Default: none) */
  secretDigests?: readonly string[];
  /** Express's `trust proxy` (TRUST_PROXY): which proxies' X-Forwarded-For names the client. (Default: none trusted) */
  trustProxy?: boolean | number | string[];
}

/** The HTTP surface: one router per feature, mounted here and nowhere else. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  // Only proxies the operator named may say who the client is; otherwise X-Forwarded-For is the client's own word.
  app.set("trust proxy", deps.trustProxy ?? false);
  // Every answer is dynamic and no client sends If-None-Match: an ETag would hash each body for nothing.
  app.set("etag", false);
  if (deps.trustProxy === true) {
    deps.logger.warn(
      "TRUST_PROXY=true believes any X-Forwarded-For, so a client can name its own address and take fresh guesses past the failed-token limit: name the proxies instead (loopback, a hop count or addresses)",
    );
  } else if (!deps.trustProxy) {
    app.use(untrustedProxyWarning(deps.logger));
  }
  const secrets = deps.secrets ?? [];
  const digests = new Set((deps.secretDigests ?? []).map((d) => d.toLowerCase()));
  if (deps.logRequests !== false) app.use(requestLog(deps.logger, secrets, digests));
  for (const r of deps.routers) app.use(r);
  app.use((_req, res) => sendError(res, 404, "not_found", "Not found"));
  app.use(errorHandler(deps.logger, deps.isBusy, secrets, digests));
  return app;
}

/**
 * Behind a proxy that TRUST_PROXY does not name, every client has the proxy's address: the
 * failed-token limit then counts everyone as one client, and a stranger's wrong tokens lock the
 * operators out. Said once, when the first forwarded request shows it.
 */
function untrustedProxyWarning(logger: Logger): express.RequestHandler {
  let warned = false;
  return (req, _res, next) => {
    if (!warned && req.headers["x-forwarded-for"] !== undefined) {
      warned = true;
      logger.warn(
        "requests arrive with X-Forwarded-For but TRUST_PROXY is unset: every client counts as the proxy's address, for the request log and the failed-token limit (10 wrong tokens lock everyone behind it out): set TRUST_PROXY (loopback for a proxy on this host)",
      );
    }
    next();
  };
}
