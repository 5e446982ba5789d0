import express, { type ErrorRequestHandler, type Express } from "express";
import { type Logger, silentLogger } from "../../log/logger.js";
import { canonicalIp } from "../../vocabulary/ip-address.js";
import { DEFAULT_MANAGE2_SANDBOX_CREDENTIALS, MANAGE2_SANDBOX_DEFAULT_GROUP_ID, type Manage2Credentials } from "../../vocabulary/manage2-sandbox-identity.js";
import { DEFAULT_SANDBOX_TOKENS } from "../../vocabulary/sandbox-identity.js";
import { FaultController, type Faults } from "../faults.js";
import { type RecordedRequest, RequestLog } from "../request-log.js";
import type { Manage2Context, Manage2Function, Manage2Invoice, NextAnswer } from "./context.js";
import { manage2ControlRoutes } from "./control-routes.js";
import { manage2Routes } from "./routes.js";
import {
  holdingsAfter,
  holdingsAt,
  lastInvoice,
  Manage2State,
  type Manage2Charge,
  type Manage2SandboxGroup,
  type Manage2SandboxLicense,
  type Manage2SandboxPackage,
  type Manage2TimelineEvent,
} from "./state.js";
import { DEFAULT_DIALECT, type Manage2Dialect } from "./wire.js";
import { definedOnly } from "../defined-only.js";
import { listenOn } from "../listen.js";

export type { Manage2Charge, Manage2Dialect, Manage2Function, Manage2Invoice, Manage2SandboxGroup, Manage2SandboxLicense, Manage2SandboxPackage, Manage2TimelineEvent, NextAnswer };

/**
 * A stand-in for cPanel's Manage2 (https://manage2.cpanel.net), faithful to its public API
 * pages (docs.cpanel.net/manage2/api/) as notes/providers-research.md reads them: an account
 * with packages, groups and licences, a ledger of what was billed, a timeline of holdings, and
 * the reseller sandbox's faults (latency, 503s, a committed change whose answer is dropped, a
 * change held past the caller's timeout and carried out anyway).
 */

/** Plausible packages, prices distinct so a test can tell from an amount what was billed; 12345 is the contract's catalogue example. */
export const DEFAULT_MANAGE2_PACKAGES: readonly Manage2SandboxPackage[] = [
  { id: 12345, name: "CPANEL-ADMIN-CLOUD", monthly_price: 15, producttype: 1 },
  { id: 12346, name: "CPANEL-PRO-CLOUD", monthly_price: 25, producttype: 1 },
  { id: 12347, name: "CPANEL-PLUS-CLOUD", monthly_price: 35, producttype: 1 },
  { id: 12348, name: "CPANEL-PREMIER-CLOUD", monthly_price: 45, producttype: 1 },
  { id: 12360, name: "CLOUDLINUX-MANAGE2", monthly_price: 12, producttype: 16 },
];

export const DEFAULT_MANAGE2_GROUPS: readonly Manage2SandboxGroup[] = [
  { id: MANAGE2_SANDBOX_DEFAULT_GROUP_ID, name: "license-bridge" },
  { id: 679, name: "reserve" },
];

export interface Manage2SandboxOptions {
  /** (Default: DEFAULT_MANAGE2_SANDBOX_CREDENTIALS) */
  credentials?: Manage2Credentials;
  /** Bearer token of /_sandbox. (Default: the reseller sandbox's admin token) */
  adminToken?: string;
  /** Only these callers are served (403 for others), as Manage2's Access IPs. (Default: every caller) */
  accessIps?: string[];
  packages?: Manage2SandboxPackage[];
  groups?: Manage2SandboxGroup[];
  /** Where an add without `groupid` goes. (Default: 678) */
  defaultGroupId?: number;
  /** (Default: 7000001) */
  firstLicenseId?: number;
  dialect?: Partial<Manage2Dialect>;
  faults?: Partial<Faults>;
  now?: () => Date;
  /** Drives the fault rates. (Default: Math.random) */
  random?: () => number;
  /** JSON file the account is kept in across restarts. */
  statePath?: string;
  logger?: Logger;
}

export interface Manage2Sandbox {
  app: Express;
  /** Every billed call: adds, and reactivations with their fee (0 when none applied). */
  ledger(): Manage2Charge[];
  /** When each licence came, went or moved, in order. */
  timeline(): Manage2TimelineEvent[];
  /** The licences held after the timeline's event `seq` (after all of them when absent). */
  holdingsAfter(seq?: number): Array<{ licenseid: number; ip: string; packageid: number }>;
  licenses(): Manage2SandboxLicense[];
  /**
   * The partner's monthly invoice as Manage2 makes it: a snapshot of the licences held on the
   * 15th (00:00 UTC) at or before `at` (default now), each at its package's monthly price. What
   * "billed while active" and "an expiry ends billing" mean, for a test to check.
   */
  invoice(at?: string): Manage2Invoice;
  /** Every API request in arrival order. */
  requests(): RecordedRequest<"manage2">[];
  setFaults(f: Partial<Faults>): void;
  setDialect(d: Partial<Manage2Dialect>): Manage2Dialect;
  /** The next authenticated call (of `fn`, or any) answers as told; see NextAnswer. */
  answerNext(next: NextAnswer): void;
  /** What cPanel, not an API user, does: the licence becomes suspended (status 4). */
  suspendLicense(licenseid: number): void;
  /** Clears licences, ledger, timeline, requests, faults and queued answers; the dialect goes back to the options'. */
  reset(): void;
  listen(port?: number, host?: string): Promise<RunningManage2Sandbox>;
}

export interface RunningManage2Sandbox {
  /** http://HOST:PORT, where the `<Function>.cgi` paths live (MANAGE2_URL). */
  url: string;
  /** Stops listening and closes every socket, keep-alive ones included. */
  close(): Promise<void>;
}

export function createManage2Sandbox(options: Manage2SandboxOptions = {}): Manage2Sandbox {
  const now = options.now ?? (() => new Date());
  const logger = options.logger ?? silentLogger();
  const initialDialect: Manage2Dialect = { ...DEFAULT_DIALECT, ...definedOnly(options.dialect) };
  let dialect = { ...initialDialect };
  let queued: NextAnswer[] = [];
  const state = new Manage2State({
    packages: [...(options.packages ?? DEFAULT_MANAGE2_PACKAGES)],
    groups: [...(options.groups ?? DEFAULT_MANAGE2_GROUPS)],
    defaultGroupId: options.defaultGroupId ?? MANAGE2_SANDBOX_DEFAULT_GROUP_ID,
    firstLicenseId: options.firstLicenseId ?? 7_000_001,
    now,
    rules: () => dialect,
    ...(options.statePath === undefined ? {} : { statePath: options.statePath }),
  });
  const requests = new RequestLog<"manage2">(now);
  const faults = new FaultController(options.faults, options.random ?? Math.random);
  const reset = (): void => {
    state.reset();
    requests.clear();
    faults.clear();
    dialect = { ...initialDialect };
    queued = [];
  };
  const ctx: Manage2Context = {
    state,
    requests,
    faults,
    credentials: options.credentials ?? DEFAULT_MANAGE2_SANDBOX_CREDENTIALS,
    ...(options.accessIps === undefined ? {} : { accessIps: options.accessIps.map((ip) => canonicalIp(ip) ?? ip) }),
    adminToken: options.adminToken ?? DEFAULT_SANDBOX_TOKENS.admin,
    dialect: () => ({ ...dialect }),
    setDialect(patch) {
      dialect = { ...dialect, ...definedOnly(patch) };
      return { ...dialect };
    },
    queueAnswer: (next) => void queued.push(next),
    takeAnswer(fn: Manage2Function) {
      const i = queued.findIndex((n) => n.fn === undefined || n.fn === fn);
      return i < 0 ? undefined : queued.splice(i, 1)[0];
    },
    invoice(at) {
      const on = lastInvoice(at === undefined ? now() : new Date(at)).toISOString();
      const lines = holdingsAt(state.timeline(), on).map((h) => ({ ...h, amount: state.package(h.packageid)?.monthly_price ?? 0 }));
      return { on, lines, total: Math.round(lines.reduce((sum, l) => sum + l.amount, 0) * 100) / 100 };
    },
    logger,
    reset,
  };

  const app = express();
  app.disable("x-powered-by");
  app.use("/_sandbox", manage2ControlRoutes(ctx));
  app.use(manage2Routes(ctx));
  app.use((_req, res) => {
    res.status(404).type("text/html").send("<html><head><title>404 Not Found</title></head><body>Not Found</body></html>");
  });
  app.use(internalError(logger));

  return {
    app,
    ledger: () => state.ledger(),
    timeline: () => state.timeline(),
    holdingsAfter: (seq) => holdingsAfter(state.timeline(), seq),
    licenses: () => state.licenses(),
    invoice: (at) => ctx.invoice(at),
    requests: () => requests.all(),
    setFaults: (f) => void faults.set(f),
    setDialect: (d) => ctx.setDialect(d),
    answerNext: (next) => ctx.queueAnswer(next),
    suspendLicense(licenseid) {
      const result = state.suspendByCpanel(licenseid);
      if (!result.ok) throw new Error(`manage2 sandbox: ${result.reason}`);
    },
    reset,
    listen: (port = 0, host = "127.0.0.1") => listenOn(app, port, host),
  };
}

function internalError(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    logger.error({ err: error, path: req.path }, "manage2 sandbox handler failed");
    if (res.headersSent) return;
    const status = typeof (error as { status?: unknown }).status === "number" ? (error as { status: number }).status : 500;
    res.status(status).type("text/html").send(`<html><head><title>${status}</title></head><body>Error</body></html>`);
  };
}

