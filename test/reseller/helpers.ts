import http from "node:http";
import net, { type AddressInfo, type Socket } from "node:net";
import { Writable } from "node:stream";
import pino, { type Logger } from "pino";

export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface TinyServer {
  /** http://127.0.0.1:<port> */
  url: string;
  requests: SeenRequest[];
  /** Server ends of the connections, in the order they were accepted. */
  sockets: Socket[];
  close(): Promise<void>;
}

/**
 * A real HTTP server on 127.0.0.1, port 0, that records every request it fully read and then
 * lets `handle` answer (or not): retries are counted on the wire, not in a mocked fetch.
 */
export async function startTinyServer(
  handle: (req: http.IncomingMessage, res: http.ServerResponse, seen: SeenRequest, index: number) => void,
  options: { keepAliveTimeoutMs?: number } = {},
): Promise<TinyServer> {
  const requests: SeenRequest[] = [];
  const sockets: Socket[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const seen = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString() };
      requests.push(seen);
      handle(req, res, seen, requests.length - 1);
    });
  });
  if (options.keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = options.keepAliveTimeoutMs;
  server.on("connection", (socket: Socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    sockets,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** A bare TCP server on 127.0.0.1, port 0, that hands each accepted connection to `onConnection`. */
export async function startTcpServer(onConnection: (socket: Socket) => void): Promise<{ port: number; accepted: () => number; close(): Promise<void> }> {
  let accepted = 0;
  const open = new Set<Socket>();
  const server = net.createServer((socket) => {
    accepted++;
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    socket.on("error", () => {});
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    accepted: () => accepted,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Resolves once `condition` holds, checking every few milliseconds; fails after `timeoutMs`. */
export async function until(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** A port that was just free and is now closed: connecting is refused. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A debug-level pino logger without pino's own redaction, so scrubbing at the source is what is tested. */
export function captureLogs(): { logger: Logger; text(): string; lines(): Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  const logger = pino({ level: "debug" }, sink);
  const text = (): string => chunks.join("");
  return {
    logger,
    text,
    lines: () =>
      text()
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

/** Fast retries for tests. */
export const QUICK_RETRY = { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 20 };

/** Resolves with what a promise rejected with; fails the test if it resolved. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected the call to fail");
    },
    (error: unknown) => error,
  );
}
