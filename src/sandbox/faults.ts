import { setTimeout as sleep } from "node:timers/promises";
import type { Request, RequestHandler, Response } from "express";
import { z } from "zod";
import type { Via } from "./state.js";
import { definedOnly } from "./defined-only.js";

export interface Faults {
  /** Added before every API request (v1 and v2, not /_sandbox). */
  latencyMs: number;
  /** 0..1: share of API requests answered 503 before doing anything. */
  errorRate: number;
  /** 0..1: share of mutating requests whose change is committed, then the socket is destroyed with no answer. */
  dropAfterCommitRate: number;
  /** The next N API requests get the 503. */
  failNext: number;
  /** The next N mutating requests are committed, then dropped. */
  dropNext: number;
  /**
   * How long a held request is held before it is carried out. A slow reseller: the caller may
   * time out and give up, and the request still takes effect afterwards (and is answered, to
   * nobody). Held requests are those of `holdNext` and `holdRate`.
   */
  holdMs: number;
  /** The next N mutating requests are held for `holdMs`, then carried out. */
  holdNext: number;
  /** 0..1: share of mutating requests held for `holdMs`, then carried out. */
  holdRate: number;
}

export const NO_FAULTS: Faults = { latencyMs: 0, errorRate: 0, dropAfterCommitRate: 0, failNext: 0, dropNext: 0, holdMs: 0, holdNext: 0, holdRate: 0 };

const rate = z.number().min(0).max(1);
const count = z.number().int().min(0);
export const faultsPatchSchema = z.strictObject({
  latencyMs: z.number().min(0).optional(),
  errorRate: rate.optional(),
  dropAfterCommitRate: rate.optional(),
  failNext: count.optional(),
  dropNext: count.optional(),
  holdMs: z.number().min(0).max(600_000).optional(),
  holdNext: count.optional(),
  holdRate: rate.optional(),
});

export class FaultController {
  private faults: Faults;

  constructor(
    initial: Partial<Faults> | undefined,
    private readonly random: () => number,
  ) {
    this.faults = { ...NO_FAULTS, ...definedOnly(initial) };
  }

  current(): Faults {
    return { ...this.faults };
  }

  set(patch: Partial<Faults>): Faults {
    this.faults = { ...this.faults, ...definedOnly(patch) };
    return this.current();
  }

  clear(): void {
    this.faults = { ...NO_FAULTS };
  }

  /** Consumes one forced failure, or rolls the error rate. */
  takeFailure(): boolean {
    return this.take("failNext", "errorRate");
  }

  /** Consumes one forced drop, or rolls the drop rate. */
  takeDrop(): boolean {
    return this.take("dropNext", "dropAfterCommitRate");
  }

  /** Consumes one forced hold, or rolls the hold rate. */
  takeHold(): boolean {
    return this.take("holdNext", "holdRate");
  }

  private take(next: "failNext" | "dropNext" | "holdNext", rate: "errorRate" | "dropAfterCommitRate" | "holdRate"): boolean {
    if (this.faults[next] > 0) {
      this.faults[next] -= 1;
      return true;
    }
    // Only roll when a rate is set, so an injected `random` sees a predictable sequence of calls.
    return this.faults[rate] > 0 && this.random() < this.faults[rate];
  }

  /**
   * Middleware for one API route: latency, then maybe a 503 before anything happens, then
   * (mutating routes) maybe let the handler commit and destroy the socket instead of answering,
   * which is the case a client must survive without double-charging on retry. The drop is
   * decided on the answer: a refusal committed nothing, so it is answered and leaves the fault
   * for the next call that does commit (contract §6: dropped after it has committed a change).
   */
  middleware(options: { via: Via | FaultWire; mutating: boolean; onDrop: (req: Request) => void; onHold?: (req: Request) => void }): RequestHandler {
    const wire = typeof options.via === "string" ? RESELLER_WIRES[options.via] : options.via;
    return async (req, res, next) => {
      if (this.faults.latencyMs > 0) await sleep(this.faults.latencyMs);
      if (this.takeFailure()) {
        wire.unavailable(res);
        return;
      }
      if (options.mutating && this.faults.holdMs > 0 && this.takeHold()) {
        options.onHold?.(req);
        // Carried out after the hold whether or not the caller is still there, as a slow reseller does.
        await sleep(this.faults.holdMs);
      }
      if (options.mutating) hangUpIfCommitted(req, res, wire, () => this.takeDrop(), options.onDrop);
      next();
    };
  }
}

/**
 * How one upstream's sandbox answers the 503 of `failNext`/`errorRate`, and tells an answer
 * that commits a change (the only kind `dropNext` drops) from a refusal. The reseller's are
 * v1's and v2's; another upstream's sandbox (Manage2's) brings its own.
 */
export interface FaultWire {
  unavailable(res: Response): void;
  commits(status: number, body: unknown, res: Response): boolean;
}

const RESELLER_WIRES: Readonly<Record<Via, FaultWire>> = {
  v1: {
    unavailable: (res) => void res.status(503).json({ success: false, error: "Service unavailable" }),
    commits: (status) => status >= 200 && status <= 299,
  },
  v2: {
    unavailable: (res) => void res.status(503).type("text/plain").send("Service Unavailable"),
    // A 2xx that is not a v2 refusal (v2 answers refusals with HTTP 200 and ok "False").
    commits(status, body) {
      if (status < 200 || status > 299) return false;
      const ok = typeof body === "object" && body !== null ? (body as { ok?: unknown }).ok : undefined;
      return typeof ok === "string" && ok.toLowerCase() === "true";
    },
  },
};

/**
 * Destroys the socket instead of sending the route's answer when that answer commits a change
 * and `takeDrop` says so. Decided once: res.json answers through res.send, which must not roll
 * a second time.
 */
function hangUpIfCommitted(req: Request, res: Response, wire: FaultWire, takeDrop: () => boolean, onDrop: (req: Request) => void): void {
  const { json, send } = res;
  let decided = false;
  const drops = (body: unknown): boolean => {
    if (decided) return false;
    decided = true;
    return wire.commits(res.statusCode, body, res) && takeDrop();
  };
  const hangUp = (): Response => {
    onDrop(req);
    req.socket.destroy();
    return res;
  };
  res.json = function (this: Response, body?: unknown) {
    return drops(body) ? hangUp() : json.call(this, body);
  };
  res.send = function (this: Response, body?: unknown) {
    return drops(typeof body === "string" ? parseJson(body) : body) ? hangUp() : send.call(this, body);
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

