import express, { type ErrorRequestHandler, type Express } from "express";
import { type Logger, silentLogger } from "../log/logger.js";
import { type SandboxContext } from "./context.js";
import { controlRoutes } from "./control-routes.js";
import { FaultController, type Faults } from "./faults.js";
import { type RecordedRequest, RequestLog } from "./request-log.js";
import { type Charge, type SandboxLicense, SandboxState } from "./state.js";
import { v1Routes } from "./v1-routes.js";
import { v2Routes } from "./v2-routes.js";
import { DEFAULT_SANDBOX_TOKENS, MAIN_RESELLER_ID, type SandboxTokens } from "../vocabulary/sandbox-identity.js";
import { listenOn } from "./listen.js";

export type { Charge, Faults, RecordedRequest, SandboxLicense, SandboxTokens };

export interface SandboxOptions {
  tokens?: Partial<SandboxTokens>;
  /** Opening balance of the main reseller; default 1000. */
  balance?: number;
  faults?: Partial<Faults>;
  now?: () => Date;
  /** Drives the fault rates; default Math.random. */
  random?: () => number;
  /** JSON file the upstream state is kept in across restarts. */
  statePath?: string;
  logger?: Logger;
}

export interface Sandbox {
  app: Express;
  /** Purchases (register, renew, bundle) of the main reseller. */
  ledger(): Charge[];
  /** Every API request in arrival order. */
  requests(): RecordedRequest[];
  /** The main reseller's current licences, free companions included. */
  licenses(): SandboxLicense[];
  balance(): number;
  setBalance(n: number): void;
  setFaults(f: Partial<Faults>): void;
  /** Clears licences, ledger, requests, faults and created accounts; the balance goes back to the opening one. */
  reset(): void;
  listen(port?: number, host?: string): Promise<RunningSandbox>;
}

export interface RunningSandbox {
  /** http://HOST:PORT */
  url: string;
  /** url + "/api/v1" */
  apiUrl: string;
  /** Same as url: the v2 paths live at the root. */
  legacyUrl: string;
  /** Stops listening and closes every socket, keep-alive ones included. */
  close(): Promise<void>;
}

export function createSandbox(options: SandboxOptions = {}): Sandbox {
  const now = options.now ?? (() => new Date());
  const logger = options.logger ?? silentLogger();
  const tokens: SandboxTokens = {
    reseller: options.tokens?.reseller ?? DEFAULT_SANDBOX_TOKENS.reseller,
    admin: options.tokens?.admin ?? DEFAULT_SANDBOX_TOKENS.admin,
    legacy: options.tokens?.legacy ?? DEFAULT_SANDBOX_TOKENS.legacy,
  };
  const state = new SandboxState({ openingBalance: options.balance ?? 1000, now, statePath: options.statePath });
  const requests = new RequestLog(now);
  const faults = new FaultController(options.faults, options.random ?? Math.random);
  const reset = (): void => {
    state.reset();
    requests.clear();
    faults.clear();
  };
  const ctx: SandboxContext = { state, requests, faults, tokens, logger, reset };

  const app = express();
  app.disable("x-powered-by");
  app.use("/_sandbox", controlRoutes(ctx));
  app.use("/api/v1", v1Routes(ctx));
  app.use(v2Routes(ctx));
  app.use((_req, res) => {
    res.status(404).type("text/plain").send("Not Found");
  });
  app.use(internalError(logger));

  return {
    app,
    ledger: () => state.charges(MAIN_RESELLER_ID),
    requests: () => requests.all(),
    licenses: () => state.licenses(MAIN_RESELLER_ID),
    balance: () => state.balance(MAIN_RESELLER_ID),
    setBalance: (n) => state.setBalance(MAIN_RESELLER_ID, n),
    setFaults: (f) => {
      faults.set(f);
    },
    reset,
    listen: (port = 0, host = "127.0.0.1") => listenOn(app, port, host).then((s) => ({ ...s, apiUrl: `${s.url}/api/v1`, legacyUrl: s.url })),
  };
}

function internalError(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    logger.error({ err: error, path: req.path }, "sandbox handler failed");
    if (res.headersSent) return;
    res.status(500).json({ success: false, error: "Internal server error" });
  };
}
