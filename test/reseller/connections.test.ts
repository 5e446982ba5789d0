import { execFile } from "node:child_process";
import dc from "node:diagnostics_channel";
import type http from "node:http";
import type { Socket } from "node:net";
import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createConnectionPool, ExchangeFailure, type ConnectionPool, type ConnectionPoolOptions, type ExchangePhase } from "../../src/reseller/connection-pool.js";
import { UnexpectedAnswerError, UpstreamUnavailableError } from "../../src/reseller/errors.js";
import { classifyExchangeFailure, DEFAULT_MAX_ANSWER_BYTES } from "../../src/reseller/transport.js";
import { createV1Client, type V1ClientOptions } from "../../src/reseller/v1.js";
import { captureLogs, json, QUICK_RETRY, rejection, startTcpServer, startTinyServer, until, type TinyServer } from "./helpers.js";

const TOKEN = "tok_SECRET_4711_abcdef";
const REGISTER = { ip: "203.0.113.10", type: "cpanel", billingcycle: 1 } as const;

let server: TinyServer | undefined;
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await server?.close();
  server = undefined;
});

function pool(options: ConnectionPoolOptions = {}): ConnectionPool {
  const created = createConnectionPool(options);
  cleanups.push(() => created.close());
  return created;
}

function v1(baseUrl: string, extra: Partial<V1ClientOptions> = {}) {
  const client = createV1Client({ baseUrl: `${baseUrl}/api/v1`, token: TOKEN, retry: QUICK_RETRY, ...extra });
  cleanups.push(() => client.close());
  return client;
}

/** A v1 success for either call the tests make: a licence list or a register. */
function answer(req: http.IncomingMessage, res: http.ServerResponse): void {
  json(res, 200, req.url?.endsWith("/license/list") ? { success: true, data: [] } : { success: true, message: "ok", data: {} });
}

/** The client ends of the connections opened while `run` runs, found through Node's diagnostics channel. */
function watchClientSockets(): { sockets: Socket[]; stop(): void } {
  const sockets: Socket[] = [];
  const onSocket = (message: unknown) => sockets.push((message as { socket: Socket }).socket);
  dc.subscribe("net.client.socket", onSocket);
  return { sockets, stop: () => dc.unsubscribe("net.client.socket", onSocket) };
}

describe("connections: certainly not sent", () => {
  it("a charge whose host name never resolves within the timeout did not take effect, so it is tried again", async () => {
    const lookups: string[] = [];
    const hanging = pool({ lookup: (hostname) => void lookups.push(hostname) });
    const client = createV1Client({ baseUrl: "http://reseller.test/api/v1", token: TOKEN, retry: QUICK_RETRY, timeoutMs: 150, pool: hanging });
    const error = await rejection(client.register(REGISTER));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error).toMatchObject({ reason: "timeout", mayHaveTakenEffect: false, retryable: true });
    expect((error as Error).message).toContain("not connected");
    expect(lookups).toEqual(["reseller.test", "reseller.test", "reseller.test"]);
  });

  it("a charge to an unknown host did not take effect", async () => {
    const unknown = pool({
      lookup: (hostname, _options, callback) =>
        setImmediate(() => callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), "", 4)),
    });
    const client = createV1Client({ baseUrl: "http://reseller.test/api/v1", token: TOKEN, retry: QUICK_RETRY, pool: unknown });
    const error = await rejection(client.register(REGISTER));
    expect(error).toMatchObject({ kind: "unavailable", reason: "network", code: "ENOTFOUND", mayHaveTakenEffect: false });
  });

  it("a charge over https whose connection drops during the TLS handshake did not take effect and is tried again", async () => {
    const tcp = await startTcpServer((socket) => socket.destroy());
    cleanups.push(() => tcp.close());
    const error = await rejection(v1(`https://127.0.0.1:${tcp.port}`).register(REGISTER));
    expect(error).toMatchObject({ kind: "unavailable", reason: "network", mayHaveTakenEffect: false });
    expect(tcp.accepted()).toBe(3);
  });

  it("a charge that waits in vain for a free connection was not sent", async () => {
    server = await startTinyServer(() => {
      // never answers, so the pool's one connection stays busy
    });
    const single = pool({ maxSockets: 1 });
    const patient = v1(server.url, { pool: single, timeoutMs: 5_000 });
    const hurried = v1(server.url, { pool: single, timeoutMs: 150 });
    const first = rejection(patient.register(REGISTER));
    await until(() => server?.requests.length === 1);
    const error = await rejection(hurried.register({ ...REGISTER, ip: "203.0.113.11" }));
    expect(error).toMatchObject({ kind: "unavailable", reason: "timeout", mayHaveTakenEffect: false });
    expect((error as Error).message).toContain("no free connection");
    expect(server.requests).toHaveLength(1);

    // Closing the pool ends the call still in flight: it was sent, so it may have taken effect.
    await single.close();
    expect(await first).toMatchObject({ kind: "unavailable", mayHaveTakenEffect: true });
  });
});

describe("connections: may have been sent", () => {
  it("a charge whose server accepts and drops the connection before reading is sent once and may have taken effect", async () => {
    const tcp = await startTcpServer((socket) => socket.destroy());
    cleanups.push(() => tcp.close());
    const error = await rejection(v1(`http://127.0.0.1:${tcp.port}`).register(REGISTER));
    expect(error).toMatchObject({ kind: "unavailable", reason: "network", code: "ECONNRESET", mayHaveTakenEffect: true });
    expect(tcp.accepted()).toBe(1);
  });

  it("a read whose server drops the connection before reading is tried again", async () => {
    const tcp = await startTcpServer((socket) => socket.destroy());
    cleanups.push(() => tcp.close());
    await rejection(v1(`http://127.0.0.1:${tcp.port}`).listLicenses());
    expect(tcp.accepted()).toBe(3);
  });

  it("a charge whose answer stalls after its status line times out, keeps the status, and may have taken effect", async () => {
    server = await startTinyServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"success":');
    });
    const error = await rejection(v1(server.url, { timeoutMs: 200 }).register(REGISTER));
    expect(error).toMatchObject({ kind: "unavailable", reason: "timeout", status: 200, mayHaveTakenEffect: true });
    expect(server.requests).toHaveLength(1);
  });
});

describe("connections: kept alive", () => {
  it("calls one after another share one connection", async () => {
    server = await startTinyServer(answer);
    const client = v1(server.url);
    await client.listLicenses();
    await client.register(REGISTER);
    await client.listLicenses();
    expect(server.requests).toHaveLength(3);
    expect(server.sockets).toHaveLength(1);
  });

  it("calls beyond maxSockets wait for a connection instead of opening more", async () => {
    let inFlight = 0;
    let most = 0;
    server = await startTinyServer((req, res) => {
      most = Math.max(most, ++inFlight);
      setImmediate(() => {
        inFlight--;
        answer(req, res);
      });
    });
    const client = v1(server.url, { pool: pool({ maxSockets: 2 }) });
    await Promise.all(Array.from({ length: 8 }, () => client.listLicenses()));
    expect(server.requests).toHaveLength(8);
    expect(most).toBeLessThanOrEqual(2);
    expect(server.sockets.length).toBeLessThanOrEqual(2);
  });

  it("an answer slower than the idle timeout is still awaited", async () => {
    server = await startTinyServer((req, res) => setTimeout(() => answer(req, res), 150));
    const client = v1(server.url, { pool: pool({ idleTimeoutMs: 30 }) });
    await expect(client.listLicenses()).resolves.toEqual([]);
  });

  it("after the server closed an idle connection, a charge goes out once on a new one", async () => {
    // The server closes each connection shortly after answering, as a short keep-alive does.
    server = await startTinyServer((req, res) => {
      answer(req, res);
      res.on("finish", () => setTimeout(() => req.socket.end(), 10));
    });
    const client = v1(server.url);
    await client.listLicenses();
    await until(() => server?.sockets[0]?.destroyed === true);
    await client.register(REGISTER);
    expect(server.requests.map((r) => r.url)).toEqual(["/api/v1/license/list", "/api/v1/license/register"]);
    expect(server.sockets).toHaveLength(2);
  });

  it("a charge is never written to a kept-alive connection the server has already hung up: it goes once on a new one", async () => {
    server = await startTinyServer(answer);
    const watch = watchClientSockets();
    cleanups.push(async () => watch.stop());
    const logs = captureLogs();
    const client = v1(server.url, { logger: logs.logger });
    await client.listLicenses();
    const port = Number(new URL(server.url).port);
    const kept = watch.sockets.find((socket) => socket.remotePort === port);
    expect(kept).toBeDefined();
    // The charge starts the moment the server's hang-up is seen, before the pool hears of it.
    const charged = new Promise((resolve, reject) => kept?.once("end", () => client.register(REGISTER).then(resolve, reject)));
    server.sockets[0]?.end();
    await charged;
    expect(server.requests.map((r) => r.url)).toEqual(["/api/v1/license/list", "/api/v1/license/register"]);
    expect(server.sockets).toHaveLength(2);
    expect(logs.lines().find((line) => line.phase === "stale")).toBeDefined();
  });

  it("a read on a kept-alive connection the server closes as it is sent goes again on a new connection, not counted as a retry", async () => {
    server = await startTinyServer(answer);
    const logs = captureLogs();
    const client = v1(server.url, { logger: logs.logger, retry: { maxRetries: 0 } });
    await client.listLicenses();
    server.sockets[0]?.destroy();
    await expect(client.listLicenses()).resolves.toEqual([]);
    expect(server.requests).toHaveLength(2);
    expect(server.sockets).toHaveLength(2);
    expect(logs.lines().find((line) => line.phase === "sent")).toBeDefined();
  });

  it("a charge on a kept-alive connection the server closes as it is sent may have taken effect and is not sent again", async () => {
    // Most likely the server closed it unread; but one that read it and then died looks the same.
    server = await startTinyServer(answer);
    const client = v1(server.url);
    await client.listLicenses();
    server.sockets[0]?.destroy();
    const error = await rejection(client.register(REGISTER));
    expect(error).toMatchObject({ kind: "unavailable", reason: "network", code: "ECONNRESET", mayHaveTakenEffect: true });
    expect(server.requests).toHaveLength(1);
  });
});

describe("connections: limits and closing", () => {
  it("an endless answer is cut off at maxAnswerBytes: unexpected, and a charge may have taken effect", async () => {
    server = await startTinyServer((_req, res) => {
      res.on("error", () => {});
      res.writeHead(200, { "content-type": "application/json" });
      const chunk = Buffer.alloc(16 * 1024, " ");
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once("drain", pump);
      };
      pump();
    });
    const error = await rejection(v1(server.url, { maxAnswerBytes: 64 * 1024 }).register(REGISTER));
    expect(error).toBeInstanceOf(UnexpectedAnswerError);
    expect(error).toMatchObject({ status: 200, mayHaveTakenEffect: true, retryable: false });
    expect((error as Error).message).toContain(`longer than ${64 * 1024} bytes`);
  });

  it("the licence list, read as it arrives, is cut off at maxAnswerBytes too when it announces no length", async () => {
    server = await startTinyServer((_req, res) => {
      res.on("error", () => {});
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"success":true,"data":[');
      const item = Buffer.from(`${JSON.stringify({ ip: "203.0.113.10", type: "cpanel", status: "active" })},`.repeat(100));
      const pump = (): void => {
        while (!res.destroyed && res.write(item));
        if (!res.destroyed) res.once("drain", pump);
      };
      pump();
    });
    const error = await rejection(v1(server.url, { maxAnswerBytes: 64 * 1024 }).listedLicenses());
    expect(error).toBeInstanceOf(UnexpectedAnswerError);
    expect(error).toMatchObject({ status: 200, retryable: false });
    expect((error as Error).message).toContain(`longer than ${64 * 1024} bytes`);
  });

  it("an answer that announces more than maxAnswerBytes is refused without being read", async () => {
    server = await startTinyServer((_req, res) => json(res, 200, { success: true, data: [], padding: "x".repeat(10_000) }));
    const error = await rejection(v1(server.url, { maxAnswerBytes: 1_000 }).listLicenses());
    expect(error).toMatchObject({ kind: "unexpected", status: 200 });
    expect(server.requests).toHaveLength(1);
  });

  it("the licence list may be longer than any other answer: a book of 30,000 licences (over 4 MiB) is read whole by default", async () => {
    const licenses = Array.from({ length: 30_000 }, (_, i) => ({
      ip: `198.18.${i >> 8}.${i & 255}`,
      type: "cloudlinux",
      status: "active",
      billingcycle: 1,
      created_at: "2026-01-01T00:00:00.000Z",
      expires_at: "2026-02-01T00:00:00.000Z",
      key: `UP-${String(i).padStart(40, "0")}`,
    }));
    const body = { success: true, data: { licenses } };
    expect(JSON.stringify(body).length).toBeGreaterThan(DEFAULT_MAX_ANSWER_BYTES);
    server = await startTinyServer((req, res) => (req.url?.includes("/license/list") ? json(res, 200, body) : json(res, 200, { success: true, data: { command: "x".repeat(DEFAULT_MAX_ANSWER_BYTES) } })));
    const client = v1(server.url);
    expect(await client.listLicenses()).toHaveLength(30_000);
    // Every other answer keeps the 4 MiB limit.
    const error = await rejection(client.installCommand({ ip: "203.0.113.10", type: "cpanel" }));
    expect(error).toMatchObject({ kind: "unexpected", status: 200 });
  });

  it("close() closes the client's kept-alive connection", async () => {
    server = await startTinyServer(answer);
    const client = createV1Client({ baseUrl: `${server.url}/api/v1`, token: TOKEN });
    await client.listLicenses();
    await client.close();
    await until(() => server?.sockets[0]?.destroyed === true);
  });

  it("a call after its pool was closed fails unsent", async () => {
    server = await startTinyServer(answer);
    const closed = createConnectionPool();
    await closed.close();
    const error = await rejection(v1(server.url, { pool: closed }).register(REGISTER));
    expect(error).toMatchObject({ kind: "unexpected", mayHaveTakenEffect: false });
    expect(server.requests).toHaveLength(0);
  });

  it("a process that made a call exits by itself while its kept-alive connection is still open", async () => {
    server = await startTinyServer(answer, { keepAliveTimeoutMs: 120_000 });
    const fixture = resolve(import.meta.dirname, "fixtures/list-once.ts");
    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done) =>
      execFile(process.execPath, ["--import", "tsx", fixture, `${server?.url}/api/v1`], { timeout: 20_000 }, (err, stdout, stderr) =>
        done({ code: err ? (typeof err.code === "number" ? err.code : null) : 0, stdout, stderr }),
      ),
    );
    expect(run).toMatchObject({ code: 0, stdout: "listed 0\n" });
    expect(server.requests).toHaveLength(1);
  });
});

describe("connections: what fetch did and this client does not", () => {
  it("a redirect is an answer, not followed: the call fails as unexpected with its status, sent once", async () => {
    // fetch followed it, turning a POST into a GET on 301 and 302; a moved reseller is a
    // configuration to fix, not something to chase with a charge.
    server = await startTinyServer((_req, res) => {
      res.writeHead(308, { location: "https://elsewhere.example/api/v1/license/register" });
      res.end();
    });
    const error = await rejection(v1(server.url).register(REGISTER));
    expect(error).toMatchObject({ kind: "unexpected", status: 308 });
    expect(server.requests).toHaveLength(1);
  });
});

describe("how far an exchange got decides whether it may have taken effect", () => {
  const limits = { timeoutMs: 1_000, maxAnswerBytes: 1_024, secrets: [TOKEN] };
  const errno = (code: string) => Object.assign(new Error(code), { code });
  const failed = (phase: ExchangePhase, extra: Partial<{ timedOut: boolean; tooLarge: boolean; reusedConnection: boolean; status: number; cause: unknown }> = {}) =>
    new ExchangeFailure({ phase, reusedConnection: false, timedOut: false, tooLarge: false, cause: errno("ECONNRESET"), ...extra });

  it.each([
    ["a request that could not be built", "unexpected", false, failed("building", { cause: new TypeError("Invalid character in header content") })],
    ["no free connection within the timeout", "unavailable", false, failed("waiting", { timedOut: true })],
    ["refused", "unavailable", false, failed("connecting", { cause: errno("ECONNREFUSED") })],
    ["host unreachable", "unavailable", false, failed("connecting", { cause: errno("EHOSTUNREACH") })],
    ["a TLS handshake cut off", "unavailable", false, failed("connecting", { cause: errno("ECONNRESET") })],
    ["a certificate refused", "unavailable", false, failed("connecting", { cause: errno("DEPTH_ZERO_SELF_SIGNED_CERT") })],
    ["no connection within the timeout", "unavailable", false, failed("connecting", { timedOut: true })],
    ["a kept-alive connection found closed before writing", "unavailable", false, failed("stale", { reusedConnection: true })],
    ["reset after sending", "unavailable", true, failed("sent")],
    ["reset after sending on a kept-alive connection", "unavailable", true, failed("sent", { reusedConnection: true })],
    ["no answer within the timeout", "unavailable", true, failed("sent", { timedOut: true })],
    ["a body cut off", "unavailable", true, failed("answered", { status: 200 })],
    ["a body too large", "unexpected", true, failed("answered", { status: 200, tooLarge: true })],
  ] as const)("%s: %s, may have taken effect %s", (_case, kind, mayHaveTakenEffect, failure) => {
    expect(classifyExchangeFailure("v1.register", failure, limits)).toMatchObject({ kind, mayHaveTakenEffect });
  });
});
