import { randomUUID } from "node:crypto";
import type { RequestHandler } from "express";
import type { Logger } from "../log/logger.js";
import { loggablePath, withoutSecrets, type TokenDigests } from "./loggable-path.js";

/**
 * One log line per request, with a request id the client can quote (X-Request-Id). The path,
 * the request id and the webhook id are the client's text: none of them is logged (or the
 * request id echoed) with one of `secrets` in it, or being one of the tokens of `digests`.
 */
export function requestLog(logger: Logger, secrets: readonly string[] = [], digests?: TokenDigests): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const incoming = req.header("x-request-id");
    const requestId = incoming && /^[\w.-]{1,100}$/.test(incoming) && withoutSecrets(incoming, secrets, digests) === incoming ? incoming : randomUUID();
    res.setHeader("X-Request-Id", requestId);
    // At LOG_LEVEL warn or above there is no line to write: no listener, no line built.
    if (!logger.isLevelEnabled("info")) return next();
    res.on("finish", () => {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      const webhookId = req.header("webhook-id");
      logger.info(
        {
          method: req.method,
          // The client's address: the socket's peer, or what a trusted proxy (TRUST_PROXY) says it is.
          client_ip: req.ip,
          // originalUrl: a router mounted under a prefix (e.g. the admin auth) rewrites req.url.
          path: loggablePath(req.originalUrl, secrets, digests),
          status: res.statusCode,
          duration_ms: Math.round(durationMs * 100) / 100,
          request_id: requestId,
          ...(webhookId ? { webhook_id: withoutSecrets(webhookId.slice(0, 256), secrets, digests) } : {}),
        },
        "request",
      );
    });
    next();
  };
}
