import type { Request, RequestHandler } from "express";
import type { Via } from "./state.js";

/** `V` names the interfaces a sandbox records: the reseller's v1 and v2, or another upstream's own. */
export interface RecordedRequest<V extends string = Via> {
  seq: number;
  at: string;
  /** "v1" or "v2" for the reseller; another upstream's sandbox names its own (e.g. "manage2"). */
  via: V;
  op: string;
  /** Body and query (and path ids) as the sandbox understood them, without the token. */
  params: Record<string, unknown>;
  /** 0 while the request is still being answered (answered to a caller that gave up included). */
  status: number | "dropped";
  /** Held by the `hold` fault before it was carried out (its caller may have given up by then). */
  held?: true;
}

/**
 * Every API request in arrival order, so tests can assert which calls reached the upstream
 * and in which order, including the ones that failed or got no answer.
 */
export class RequestLog<V extends string = Via> {
  private entries: RecordedRequest<V>[] = [];
  private seq = 0;
  private readonly live = new WeakMap<Request, RecordedRequest<V>>();

  constructor(private readonly now: () => Date) {}

  all(): RecordedRequest<V>[] {
    return this.entries.map((e) => ({ ...e, params: { ...e.params } }));
  }

  clear(): void {
    this.entries = [];
    this.seq = 0;
  }

  /**
   * Middleware: records the request on arrival and its status once answered. The status is
   * taken when the route ends its answer, not when the answer reaches the caller: a caller that
   * gave up (a client timeout, a killed bridge) closes the socket first, and the route still
   * runs to its end and commits, which a test must be able to wait for. `params`: for another
   * upstream's sandbox, which reads its parameters its own way (never its credentials).
   */
  recorder(via: V, op: string, params?: (req: Request) => Record<string, unknown>): RequestHandler {
    return (req, res, next) => {
      const entry: RecordedRequest<V> = {
        seq: ++this.seq,
        at: this.now().toISOString(),
        via,
        op,
        params: params ? params(req) : paramsOf(req, via as Via),
        status: 0,
      };
      this.entries.push(entry);
      this.live.set(req, entry);
      const end = res.end;
      res.end = function (this: typeof res, ...args: Parameters<typeof end>) {
        if (entry.status === 0) entry.status = res.statusCode;
        return end.apply(this, args);
      } as typeof end;
      next();
    };
  }

  markHeld(req: Request): void {
    const entry = this.live.get(req);
    if (entry) entry.held = true;
  }

  markDropped(req: Request): void {
    const entry = this.live.get(req);
    if (entry) entry.status = "dropped";
  }
}

function paramsOf(req: Request, via: string): Record<string, unknown> {
  const body = isPlainObject(req.body) ? req.body : {};
  const query = req.query as Record<string, unknown>;
  // v2 reads the query string first (it is where the interface puts parameters); v1 reads the body.
  const merged: Record<string, unknown> =
    via === "v2" ? { ...body, ...query } : { ...query, ...req.params, ...body };
  delete merged.token;
  return merged;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
