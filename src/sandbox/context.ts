import type { SandboxTokens } from "../vocabulary/sandbox-identity.js";
import type { RequestHandler } from "express";
import type { Logger } from "../log/logger.js";
import type { FaultController } from "./faults.js";
import type { RequestLog } from "./request-log.js";
import type { SandboxState, Via } from "./state.js";

/** What the routers share: one sandbox's state, request log, faults and tokens. */
export interface SandboxContext {
  state: SandboxState;
  requests: RequestLog;
  faults: FaultController;
  tokens: SandboxTokens;
  logger: Logger;
  reset(): void;
}

/**
 * The middleware every API route starts with, in this order: record the arrival (so even
 * refused and failed calls show up), then the faults. Auth and validation come after, as
 * they would behind a real load balancer.
 */
export function apiEntry(ctx: SandboxContext, via: Via, op: string, mutating: boolean): RequestHandler[] {
  return [
    ctx.requests.recorder(via, op),
    (req, res, next) => {
      res.on("finish", () => ctx.logger.debug({ via, op, status: res.statusCode }, "sandbox request"));
      next();
    },
    ctx.faults.middleware({ via, mutating, onDrop: (req) => ctx.requests.markDropped(req), onHold: (req) => ctx.requests.markHeld(req) }),
  ];
}
