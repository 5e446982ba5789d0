import express, { type ErrorRequestHandler, type Express } from "express";
import { silentLogger, type Logger } from "../../log/logger.js";
import {
  DEFAULT_CLN_SANDBOX_ACCOUNT,
  DEFAULT_CLN_SANDBOX_ADMIN_TOKEN,
  OTHER_CLN_SANDBOX_ACCOUNT,
  type ClnSandboxAccount,
} from "../../vocabulary/cln-sandbox-identity.js";
import { FaultController, type Faults } from "../faults.js";
import { RequestLog } from "../request-log.js";
import { DEFAULT_TOKEN_WINDOW_SECONDS } from "./auth.js";
import { clnControlRoutes, type ClnSandboxControls } from "./control-routes.js";
import { clnRoutes } from "./routes.js";
import { ClnState } from "./state.js";
import { CLN_MESSAGES, ClnWriter, DEFAULT_QUIRKS, type ClnQuirks } from "./wire.js";
import { definedOnly } from "../defined-only.js";
import { listenOn } from "../listen.js";

export type { ClnHolding, ClnInvoiceLine, ClnPurchase, ClnTimelineEntry } from "./state.js";
export type { ClnQuirks } from "./wire.js";

/**
 * A stand-in for CloudLinux CLN's IP licence API, faithful to its documentation (CloudLinux REST
 * API, docs.cloudlinux.com/cloudlinux_rest_api.pdf, "IP-based licenses API"; how CloudLinux's own
 * module calls it, cloudlinux/cloudlinux-whmcs-plugin classes/api/IPBased.php) and stateful: the token check, the envelope, register answering the licence already held, remove
 * and convert answering false for nothing done, a ledger of purchases, a timeline of holdings,
 * a monthly invoice, and the reseller sandbox's faults (latency, 5xx, an answer dropped after the
 * change was made, a change held past the caller's timeout and made anyway).
 */

export interface ClnSandboxOptions {
  /** The account the bridge signs in as. (Default: DEFAULT_CLN_SANDBOX_ACCOUNT) */
  account?: ClnSandboxAccount;
  /** Bearer token of /_sandbox. (Default: DEFAULT_CLN_SANDBOX_ADMIN_TOKEN) */
  adminToken?: string;
  /** How far a token's timestamp may be from the sandbox's clock, either way. (Default: 300) */
  tokenWindowSeconds?: number;
  faults?: Partial<Faults>;
  quirks?: Partial<ClnQuirks>;
  now?: () => Date;
  /** Drives the fault rates. (Default: Math.random) */
  random?: () => number;
  /** JSON file the state is kept in across restarts. (Default: none) */
  statePath?: string;
  logger?: Logger;
}

export interface ClnSandbox extends ClnSandboxControls {
  app: Express;
  listen(port?: number, host?: string): Promise<RunningClnSandbox>;
}

export interface RunningClnSandbox {
  /** http://HOST:PORT: the client's base URL (it calls `/api/ipl/...` below it). */
  url: string;
  /** url + "/api/ipl" */
  apiUrl: string;
  /** Stops listening and closes every socket, keep-alive ones included. */
  close(): Promise<void>;
}

export function createClnSandbox(options: ClnSandboxOptions = {}): ClnSandbox {
  const now = options.now ?? (() => new Date());
  const logger = options.logger ?? silentLogger();
  const account = options.account ?? DEFAULT_CLN_SANDBOX_ACCOUNT;
  const accounts = [account, OTHER_CLN_SANDBOX_ACCOUNT].filter((a, i, all) => all.findIndex((b) => b.login === a.login) === i);
  let quirks: ClnQuirks = { ...DEFAULT_QUIRKS, ...definedOnly(options.quirks) };
  const state = new ClnState({ now, statePath: options.statePath, exclusiveProducts: quirks.exclusiveProducts });
  const requests = new RequestLog<"cln">(now);
  const faults = new FaultController(options.faults, options.random ?? Math.random);
  const writer = new ClnWriter(() => quirks);
  let registerFailures: string[] = [];
  let removeFailures: string[] = [];

  const sandbox: ClnSandbox = {
    app: express(),
    ledger: () => state.purchases(account.login),
    timeline: () => state.timeline(account.login),
    licenses: () => state.holdings(account.login),
    requests: () => requests.all(),
    invoice: (month) => state.invoice(account.login, month),
    faults: () => faults.current(),
    setFaults: (patch) => faults.set(patch),
    quirks: () => ({ ...quirks }),
    setQuirks(patch) {
      quirks = { ...quirks, ...definedOnly(patch) };
      state.exclusiveProducts = quirks.exclusiveProducts;
      return { ...quirks };
    },
    failNextRegister(message) {
      registerFailures.push(message);
    },
    failNextRemove(message) {
      removeFailures.push(message);
    },
    holdByAnother: (ip, type) => state.register(OTHER_CLN_SANDBOX_ACCOUNT.login, ip, type).ok,
    checkIn: (ip, type, serverInfo = "cloudlinux-release-8 (sandbox)") => state.checkIn(account.login, ip, type, serverInfo),
    reset() {
      state.reset();
      requests.clear();
      faults.clear();
      quirks = { ...DEFAULT_QUIRKS, ...definedOnly(options.quirks) };
      state.exclusiveProducts = quirks.exclusiveProducts;
      registerFailures = [];
      removeFailures = [];
    },
    listen: (port = 0, host = "127.0.0.1") => listenOn(sandbox.app, port, host).then((s) => ({ ...s, apiUrl: `${s.url}/api/ipl` })),
  };

  const app = sandbox.app;
  app.disable("x-powered-by");
  app.use("/_sandbox", clnControlRoutes(sandbox, options.adminToken ?? DEFAULT_CLN_SANDBOX_ADMIN_TOKEN));
  app.use(
    clnRoutes({
      state,
      requests,
      faults,
      writer,
      accounts: () => accounts,
      now,
      tokenWindowSeconds: options.tokenWindowSeconds ?? DEFAULT_TOKEN_WINDOW_SECONDS,
      takeRegisterFailure: () => registerFailures.shift(),
      takeRemoveFailure: () => removeFailures.shift(),
      logger,
    }),
  );
  app.use((_req, res) => {
    res.status(404).type("text/html").send("<html><head><title>404 Not Found</title></head><body><h1>404 Not Found</h1></body></html>");
  });
  app.use(internalError(logger, writer));
  return sandbox;
}

function internalError(logger: Logger, writer: ClnWriter): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    logger.error({ err: error, path: req.path }, "CLN sandbox handler failed");
    if (res.headersSent) return;
    writer.refuse(res, CLN_MESSAGES.serverError, 500);
  };
}

