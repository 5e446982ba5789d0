import http from "node:http";
import https from "node:https";
import type { LookupFunction, Socket } from "node:net";
import { TLSSocket } from "node:tls";

/**
 * Kept-alive connections to the reseller, and one HTTP exchange over them that records how far
 * it got: whether a failed request can have reached the upstream is decided by that, not by
 * guessing from an error code.
 */

export const DEFAULT_MAX_SOCKETS = 16;
export const DEFAULT_IDLE_TIMEOUT_MS = 4_000;

export interface ConnectionPoolOptions {
  /**
   * Exchanges in flight at once, over all the pool's hosts; one more waits for a free slot, its
   * timeout running. So at most this many busy connections, plus up to this many idle ones per
   * host. (Default: 16)
   */
  maxSockets?: number;
  /**
   * An idle connection is closed after this long, or a second before the server's own
   * `Keep-Alive: timeout=` runs out when that is sooner, so we seldom pick one the server is
   * closing. (Default: 4000, under the 5 s of Node, Apache and many proxies)
   */
  idleTimeoutMs?: number;
  /** Resolves host names, as `net.connect` takes it. (Default: `dns.lookup`) */
  lookup?: LookupFunction;
}

/**
 * How far an exchange got. Up to "stale" nothing of the request has left this host; from
 * "sent" on the upstream may have it.
 */
export type ExchangePhase =
  /** The request could not be made at all (a bad header or URL, the pool closed). */
  | "building"
  /** For a free slot in the pool. */
  | "waiting"
  /** A new connection: name lookup, TCP connect, TLS handshake. */
  | "connecting"
  /** A kept-alive connection was found already closed by the server when it was picked; nothing written. */
  | "stale"
  /** Written to an open connection; no status line yet. */
  | "sent"
  /** The status line came; the body did not arrive whole. */
  | "answered";

/** Takes an answer's body piece by piece as it arrives, and makes something of it at its end. Neither method may throw. */
export interface BodySink<T> {
  write(chunk: Buffer): void;
  end(): T;
}

export interface ExchangeRequest<T = never> {
  url: URL;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string;
  /** Bounds the whole exchange: waiting for a slot, connecting, sending and the full answer. */
  timeoutMs: number;
  /** A longer answer is cut off and the exchange fails. */
  maxAnswerBytes: number;
  /** Open a new connection for this one exchange instead of taking a kept-alive one. */
  freshConnection?: boolean;
  /**
   * Offered each answer's status and type once they come: a sink it returns takes the body as
   * it arrives, and nothing of it is collected here. (Default: the body collected whole, as `text`)
   */
  sinkFor?: (status: number, contentType: string | undefined) => BodySink<T> | undefined;
}

export interface ExchangeAnswer<T = never> {
  status: number;
  contentType: string | undefined;
  /** The body decoded as UTF-8, a byte-order mark dropped; "" when a sink took it. */
  text: string;
  /** What the sink made of the body, when one took it. */
  sunk?: T;
}

export class ExchangeFailure extends Error {
  readonly phase: ExchangePhase;
  /** The connection had carried an earlier exchange (kept alive). */
  readonly reusedConnection: boolean;
  /** Ended by our `timeoutMs`, not by the network. */
  readonly timedOut: boolean;
  /** Ended because the answer passed `maxAnswerBytes`. */
  readonly tooLarge: boolean;
  /** Of the answer, once the status line came. */
  readonly status?: number;

  constructor(init: { phase: ExchangePhase; reusedConnection: boolean; timedOut: boolean; tooLarge: boolean; status?: number; cause: unknown }) {
    const detail = init.cause instanceof Error ? init.cause.message : String(init.cause);
    super(`exchange failed while ${init.phase}: ${detail}`, { cause: init.cause });
    this.name = "ExchangeFailure";
    this.phase = init.phase;
    this.reusedConnection = init.reusedConnection;
    this.timedOut = init.timedOut;
    this.tooLarge = init.tooLarge;
    if (init.status !== undefined) this.status = init.status;
  }
}

export interface ConnectionPool {
  /** One request and its whole answer; rejects with an ExchangeFailure only. */
  exchange<T = never>(request: ExchangeRequest<T>): Promise<ExchangeAnswer<T>>;
  /**
   * Closes every connection, idle or busy; an exchange still running fails where it had got to,
   * and later ones fail unsent. Idle connections never keep the process alive, closed or not.
   */
  close(): Promise<void>;
}

export function createConnectionPool(options: ConnectionPoolOptions = {}): ConnectionPool {
  const maxSockets = options.maxSockets ?? DEFAULT_MAX_SOCKETS;
  if (!Number.isInteger(maxSockets) || maxSockets < 1) throw new RangeError(`maxSockets must be a whole number from 1, not ${maxSockets}`);
  const agentOptions: http.AgentOptions = {
    keepAlive: true,
    // The slots below are the limit: an agent that queued requests itself would open a
    // connection for a queued request after close() had destroyed its sockets.
    maxSockets: Infinity,
    maxFreeSockets: maxSockets,
    // The connection used last is the least likely to be closing.
    scheduling: "lifo",
    // Node sets this on idle sockets (and lowers it to the server's Keep-Alive hint); on a busy
    // one it only emits 'timeout', which nothing here acts on: `timeoutMs` bounds an exchange.
    timeout: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    ...(options.lookup ? { lookup: options.lookup } : {}),
  };
  const agents = { "http:": new http.Agent(agentOptions), "https:": new https.Agent(agentOptions) };
  let closed = false;
  let busy = 0;
  const waiting: Array<() => void> = [];
  const running = new Set<(cause: Error) => void>();

  const acquire = (start: () => void): void => {
    if (busy < maxSockets) {
      busy++;
      start();
    } else {
      waiting.push(start);
    }
  };
  // A slot passes straight to the next waiter. Called on the tick after an exchange ended, so a
  // kept-alive socket is back in the agent (Node frees it on the tick after the answer's end).
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else busy--;
  };

  function open(request: ExchangeRequest<unknown>): http.ClientRequest {
    if (closed) throw new Error("the reseller connection pool is closed");
    const protocol = request.url.protocol;
    if (protocol !== "http:" && protocol !== "https:") throw new TypeError(`unsupported protocol ${protocol}`);
    const headers = { ...request.headers };
    if (request.body !== undefined) headers["Content-Length"] = String(Buffer.byteLength(request.body));
    const requestOptions: http.RequestOptions = {
      method: request.method,
      headers,
      // `false` gives Node's one-off agent: a new connection, closed after the answer.
      agent: request.freshConnection ? false : agents[protocol],
      ...(options.lookup ? { lookup: options.lookup } : {}),
    };
    return (protocol === "https:" ? https : http).request(request.url, requestOptions);
  }

  function exchange<T>(request: ExchangeRequest<T>): Promise<ExchangeAnswer<T>> {
    return new Promise<ExchangeAnswer<T>>((resolve, reject) => {
      let phase: ExchangePhase = "waiting";
      let reusedConnection = false;
      let status: number | undefined;
      let req: http.ClientRequest | undefined;
      let holdsSlot = false;
      let done = false;

      const end = (): void => {
        done = true;
        clearTimeout(timer);
        running.delete(abort);
        const queued = waiting.indexOf(start);
        if (queued >= 0) waiting.splice(queued, 1);
        if (holdsSlot) process.nextTick(release);
      };
      const fail = (cause: unknown, how: "error" | "timeout" | "too-large" = "error"): void => {
        if (done) return;
        end();
        reject(new ExchangeFailure({ phase, reusedConnection, timedOut: how === "timeout", tooLarge: how === "too-large", status, cause }));
        req?.destroy();
      };
      const abort = (cause: Error): void => fail(cause);
      const timer = setTimeout(() => fail(new Error(`no complete answer within ${request.timeoutMs} ms`), "timeout"), request.timeoutMs);
      running.add(abort);

      function start(): void {
        holdsSlot = true;
        try {
          req = open(request);
        } catch (cause) {
          phase = "building";
          fail(cause);
          return;
        }
        req.on("error", (cause) => fail(cause));
        req.once("close", () => {
          if (status === undefined) fail(new Error("connection closed before an answer"));
        });
        req.once("socket", (socket: Socket) => onSocket(req as http.ClientRequest, socket));
        req.once("response", onResponse);
        req.end(request.body);
      }

      function onSocket(clientRequest: http.ClientRequest, socket: Socket): void {
        reusedConnection = clientRequest.reusedSocket;
        if (reusedConnection) {
          // Node writes the request right after this event. A kept-alive socket whose server
          // already hung up (its end seen, the agent not yet told) must not get it: destroyed
          // here, nothing is written, and the request provably never left.
          if (socket.destroyed || socket.readableEnded || socket.writableEnded) {
            phase = "stale";
            fail(new Error("kept-alive connection already closed by the server"));
            socket.destroy();
            return;
          }
          phase = "sent";
          return;
        }
        // A new connection: nothing of the request leaves before TCP (and TLS) is up.
        phase = "connecting";
        const up = (): void => {
          if (phase === "connecting") phase = "sent";
        };
        if (socket instanceof TLSSocket) socket.once("secureConnect", up);
        else if (socket.connecting) socket.once("connect", up);
        else up();
      }

      function onResponse(res: http.IncomingMessage): void {
        phase = "answered";
        status = res.statusCode ?? 0;
        const limit = request.maxAnswerBytes;
        const tooLarge = () => new Error(`answer longer than ${limit} bytes`);
        const declared = Number(res.headers["content-length"]);
        if (Number.isFinite(declared) && declared > limit) {
          fail(tooLarge(), "too-large");
          return;
        }
        const sink = request.sinkFor?.(status, res.headers["content-type"]);
        if (sink) {
          sinkBody(res, sink, limit, tooLarge);
          return;
        }
        // An answer of a declared length is copied into one buffer as it comes, so that the chunks
        // and their copy are never held at once.
        let whole = Number.isFinite(declared) && declared > 0 ? Buffer.allocUnsafe(declared) : undefined;
        let chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          if (done) return;
          if (size + chunk.length > limit) return fail(tooLarge(), "too-large");
          if (whole && size + chunk.length <= whole.length) chunk.copy(whole, size);
          else {
            if (whole) chunks.push(whole.subarray(0, size));
            whole = undefined;
            chunks.push(chunk);
          }
          size += chunk.length;
        });
        res.once("end", () => {
          if (done) return;
          end();
          const bytes = whole ? whole.subarray(0, size) : Buffer.concat(chunks, size);
          // The response may outlive the exchange on a kept-alive connection: it keeps no body.
          whole = undefined;
          chunks = [];
          const text = bytes.toString("utf8");
          resolve({ status: status ?? 0, contentType: res.headers["content-type"], text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text });
        });
        listenForBreaks(res);
      }

      /** The body handed to the sink chunk by chunk, within the same limit. */
      function sinkBody(res: http.IncomingMessage, sink: BodySink<T>, limit: number, tooLarge: () => Error): void {
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          if (done) return;
          size += chunk.length;
          if (size > limit) return fail(tooLarge(), "too-large");
          sink.write(chunk);
        });
        res.once("end", () => {
          if (done) return;
          end();
          resolve({ status: status ?? 0, contentType: res.headers["content-type"], text: "", sunk: sink.end() });
        });
        listenForBreaks(res);
      }

      function listenForBreaks(res: http.IncomingMessage): void {
        res.on("error", (cause) => fail(cause));
        res.once("close", () => fail(new Error("connection closed before the answer was complete")));
      }

      acquire(start);
    });
  }

  return {
    exchange,
    async close() {
      closed = true;
      const closing = new Error("the reseller connection pool was closed");
      for (const abort of [...running]) abort(closing);
      agents["http:"].destroy();
      agents["https:"].destroy();
    },
  };
}
