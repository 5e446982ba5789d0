import type { Logger } from "../../log/logger.js";
import type { Manage2Credentials } from "../../vocabulary/manage2-sandbox-identity.js";
import type { FaultController } from "../faults.js";
import type { RequestLog } from "../request-log.js";
import type { Manage2State } from "./state.js";
import type { Manage2Dialect } from "./wire.js";

/** The partner's monthly invoice: a snapshot of the licences held on the 15th, each at its package's monthly price. */
export interface Manage2Invoice {
  /** The snapshot's instant. */
  on: string;
  lines: Array<{ licenseid: number; ip: string; packageid: number; amount: number }>;
  total: number;
}

/** The functions the sandbox serves at `/<Function>.cgi`; the first six change something. */
export const MANAGE2_FUNCTIONS = [
  "XMLlicenseAdd",
  "XMLlicenseExpire",
  "XMLlicenseReActivate",
  "XMLtransfer",
  "XMLpackageUpdate",
  "XMLupdateActiveLicenseMetadata",
  "XMLlicenseInfo",
  "XMLlookup",
  "XMLRawlookup",
  "XMLpackageInfo",
  "XMLgroupInfo",
] as const;
export type Manage2Function = (typeof MANAGE2_FUNCTIONS)[number];

export const MUTATING_FUNCTIONS: ReadonlySet<Manage2Function> = new Set(MANAGE2_FUNCTIONS.slice(0, 6));

/**
 * A test's order for the next authenticated call (of `fn`, or of any function), taken once:
 * - `refuse`: answered `status` 0 (or -1) with this reason, nothing done;
 * - `http`: answered with this HTTP status and body, nothing done;
 * - `garble`: carried out, then answered with the first half of its JSON: unreadable;
 * - `notExpired` (XMLlicenseExpire only): answered `status` 1 with `result` "", nothing done:
 *   the Expire page's "`""` — The license did not expire", a success that changed nothing.
 */
export type NextAnswer =
  | { fn?: Manage2Function; refuse: string; status?: 0 | -1 }
  | { fn?: Manage2Function; http: number; body?: string; contentType?: string }
  | { fn?: Manage2Function; garble: true }
  | { fn: "XMLlicenseExpire"; notExpired: true };

/** What the routers share: one sandbox's account, request log, faults and settings. */
export interface Manage2Context {
  state: Manage2State;
  requests: RequestLog<"manage2">;
  faults: FaultController;
  credentials: Manage2Credentials;
  /** Callers allowed, canonical IPs; every caller when absent. */
  accessIps?: readonly string[];
  /** Bearer token of /_sandbox. */
  adminToken: string;
  dialect(): Manage2Dialect;
  setDialect(patch: Partial<Manage2Dialect>): Manage2Dialect;
  queueAnswer(next: NextAnswer): void;
  takeAnswer(fn: Manage2Function): NextAnswer | undefined;
  /** The snapshot invoice of the 15th at or before `at` (default now). */
  invoice(at?: string): Manage2Invoice;
  logger: Logger;
  reset(): void;
}
