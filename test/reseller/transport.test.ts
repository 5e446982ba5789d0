import { afterEach, describe, expect, it } from "vitest";
import { UnexpectedAnswerError, UpstreamUnavailableError } from "../../src/reseller/errors.js";
import { backoffDelayMs, createTransport, DEFAULT_RETRY, shouldRetry, type Call } from "../../src/reseller/transport.js";
import { createV1Client } from "../../src/reseller/v1.js";
import { createV2Client } from "../../src/reseller/v2.js";
import { captureLogs, closedPort, json, QUICK_RETRY, startTinyServer, type TinyServer } from "./helpers.js";

const TOKEN = "tok_SECRET_4711_abcdef";
let server: TinyServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

const v1 = (baseUrl: string, extra: { timeoutMs?: number; logger?: ReturnType<typeof captureLogs>["logger"] } = {}) =>
  createV1Client({ baseUrl: `${baseUrl}/api/v1`, token: TOKEN, retry: QUICK_RETRY, ...extra });

const REGISTER = { ip: "203.0.113.10", type: "cpanel", billingcycle: 1 } as const;

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail("expected the call to fail"),
    (error: unknown) => error,
  );
}

describe("transport: a call that may have reached the upstream", () => {
  it("a register that times out is reported as maybe applied and sent exactly once", async () => {
    server = await startTinyServer(() => {
      // never answers
    });
    const error = await failure(v1(server.url, { timeoutMs: 500 }).register(REGISTER));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error).toMatchObject({ kind: "unavailable", reason: "timeout", retryable: true, mayHaveTakenEffect: true });
    expect(server.requests).toHaveLength(1);
  });

  it("a register whose connection drops after the request was read is sent exactly once", async () => {
    server = await startTinyServer((req) => req.socket.destroy());
    const error = await failure(v1(server.url).register(REGISTER));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error).toMatchObject({ reason: "network", mayHaveTakenEffect: true, retryable: true });
    expect(server.requests).toHaveLength(1);
  });

  it("a 5xx on a register is not retried and may have taken effect", async () => {
    server = await startTinyServer((_req, res) => json(res, 503, { success: false, error: "Service unavailable" }));
    const error = await failure(v1(server.url).register(REGISTER));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error).toMatchObject({ status: 503, mayHaveTakenEffect: true, upstreamMessage: "Service unavailable" });
    expect(server.requests).toHaveLength(1);
  });

  it("a v2 register over POST that times out is sent exactly once", async () => {
    server = await startTinyServer(() => {});
    const client = createV2Client({ baseUrl: server.url, token: TOKEN, method: "POST", timeoutMs: 500, retry: QUICK_RETRY });
    const error = await failure(client.register({ ip: "203.0.113.10", type: "cpanel" }));
    expect(error).toMatchObject({ kind: "unavailable", mayHaveTakenEffect: true });
    expect(server.requests).toHaveLength(1);
  });
});

describe("transport: reads and requests that never left", () => {
  it("a licence list that meets two 5xx is retried and then succeeds", async () => {
    server = await startTinyServer((_req, res, _seen, index) =>
      index < 2
        ? json(res, 502, { success: false, error: "Bad gateway" })
        : json(res, 200, { success: true, data: [{ ip: "203.0.113.10", type: "cpanel" }] }),
    );
    const licenses = await v1(server.url).listLicenses();
    expect(licenses.map((l) => l.ip)).toEqual(["203.0.113.10"]);
    expect(server.requests).toHaveLength(3);
  });

  it("a read gives up after two retries", async () => {
    server = await startTinyServer((_req, res) => json(res, 503, { success: false, error: "Service unavailable" }));
    const error = await failure(v1(server.url).listLicenses());
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(server.requests).toHaveLength(3);
  });

  it("a read that times out is retried", async () => {
    server = await startTinyServer((_req, res, _seen, index) => {
      if (index > 0) json(res, 200, { success: true, data: { command: "sh install.sh" } });
    });
    const answer = await v1(server.url, { timeoutMs: 500 }).installCommand({ ip: "203.0.113.10", type: "cpanel" });
    expect(answer.command).toBe("sh install.sh");
    expect(server.requests).toHaveLength(2);
  });

  it("a 4xx is an answer, not a fault: never retried", async () => {
    server = await startTinyServer((_req, res) => json(res, 404, { success: false, error: "Not found" }));
    await failure(v1(server.url).installCommand({ ip: "203.0.113.10", type: "cpanel" }));
    expect(server.requests).toHaveLength(1);
  });

  it("a register to a closed port is retried and certainly did not take effect", async () => {
    const port = await closedPort();
    const logs = captureLogs();
    const error = await failure(v1(`http://127.0.0.1:${port}`, { logger: logs.logger }).register(REGISTER));
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error).toMatchObject({ reason: "network", code: "ECONNREFUSED", mayHaveTakenEffect: false, retryable: true });
    const attempts = logs.lines().filter((line) => line.msg === "reseller call failed");
    expect(attempts.map((line) => line.attempt)).toEqual([1, 2, 3]);
  });

  it("a request that cannot even be built is not retried and not sent", async () => {
    const client = createV1Client({ baseUrl: "http://127.0.0.1:1/api/v1", token: "bad\ntoken", retry: QUICK_RETRY });
    const error = await failure(client.listLicenses());
    expect(error).toBeInstanceOf(UnexpectedAnswerError);
    expect(error).toMatchObject({ mayHaveTakenEffect: false });
    expect(String((error as Error).message)).not.toContain("bad\ntoken");
  });
});

describe("transport: logging", () => {
  it("logs each v1 call at debug level without the token, even when the body echoes it", async () => {
    server = await startTinyServer((_req, res) =>
      json(res, 200, { success: true, data: [{ ip: "203.0.113.10", type: "cpanel", note: `issued by ${TOKEN}` }] }),
    );
    const logs = captureLogs();
    const licenses = await v1(server.url, { logger: logs.logger }).listLicenses();
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(logs.text()).not.toContain(TOKEN);
    expect(JSON.stringify(licenses)).not.toContain(TOKEN);
    const [line] = logs.lines();
    expect(line).toMatchObject({ level: 20, operation: "v1.listLicenses", method: "GET", status: 200 });
    expect(line?.url).toBe(`${server.url}/api/v1/license/list`);
    expect(typeof line?.duration_ms).toBe("number");
    expect(JSON.stringify(line?.body)).toContain("[redacted]");
  });

  it("logs a v2 call with the token parameter redacted from the query string", async () => {
    server = await startTinyServer((_req, res) => json(res, 200, { ok: "True", message: "License registered" }));
    const logs = captureLogs();
    const client = createV2Client({ baseUrl: server.url, token: TOKEN, logger: logs.logger });
    await client.register({ ip: "203.0.113.10", type: "cpanel", billingcycle: 12 });
    expect(server.requests[0]?.url).toContain(`token=${TOKEN}`);
    expect(logs.text()).not.toContain(TOKEN);
    const [line] = logs.lines();
    expect(line?.url).toBe(`${server.url}/rc/license.php?token=[redacted]&ip=203.0.113.10&type=cpanel&billingcycle=12`);
  });

  it("keeps the token out of errors and their raw bodies", async () => {
    server = await startTinyServer((_req, res) => json(res, 200, { ok: "False", message: `Wrong token ${TOKEN}` }));
    const logs = captureLogs();
    const client = createV2Client({ baseUrl: server.url, token: TOKEN, logger: logs.logger });
    const error = await failure(client.renew({ ip: "203.0.113.10", type: "cpanel" }));
    expect(error).toMatchObject({ kind: "unauthorized" });
    expect(JSON.stringify({ ...(error as object), message: (error as Error).message })).not.toContain(TOKEN);
    expect(logs.text()).not.toContain(TOKEN);
  });
  it("scrubs a call's own secrets (a token made for that call) from its log line and answer, as the transport's own", async () => {
    const perCall = "login|1700000000|0123456789abcdef0123456789abcdef01234567";
    server = await startTinyServer((_req, res) => json(res, 200, { success: true, note: `seen ${perCall}`, hash: perCall.slice(-40) }));
    const logs = captureLogs();
    const transport = createTransport({ token: TOKEN, logger: logs.logger });
    const url = new URL(`${server.url}/api/ipl/list.json`);
    url.searchParams.set("token", perCall);
    const answer = await transport.send({ operation: "cln.list", method: "GET", url, readOnly: true, secrets: [perCall, perCall.slice(-40)] });
    await transport.close();
    expect(JSON.stringify(answer.body)).not.toContain(perCall.slice(-40));
    expect(logs.text()).not.toContain(perCall.slice(-40));
    expect(logs.lines()[0]?.url).toBe(`${server.url}/api/ipl/list.json?token=[redacted]`);
  });
});

describe("transport: v2 wire format", () => {
  it("sends every parameter in the query string, for POST too, with no body", async () => {
    server = await startTinyServer((_req, res) => json(res, 200, { ok: "True", message: "Core changed" }));
    const client = createV2Client({ baseUrl: server.url, token: TOKEN, method: "POST" });
    const answer = await client.changeCore({ ip: "203.0.113.10", core: 9 });
    expect(answer).toEqual({ message: "Core changed", raw: { ok: "True", message: "Core changed" } });
    expect(server.requests[0]).toMatchObject({ method: "POST", url: `/ChangeCore.php?token=${TOKEN}&ip=203.0.113.10&core=9`, body: "" });
  });

  it("v1 sends JSON with bearer auth", async () => {
    server = await startTinyServer((_req, res) => json(res, 200, { success: true, message: "ok", data: {} }));
    await v1(server.url).changeIp({ ip: "203.0.113.10", newip: "203.0.113.11", type: "cpanel" });
    const seen = server.requests[0];
    expect(seen).toMatchObject({ method: "POST", url: "/api/v1/license/change-ip" });
    expect(seen?.headers).toMatchObject({
      authorization: `Bearer ${TOKEN}`,
      "content-type": "application/json",
      accept: "application/json",
    });
    expect(JSON.parse(seen?.body ?? "")).toEqual({ ip: "203.0.113.10", newip: "203.0.113.11", type: "cpanel" });
  });

  it("a form is sent as an urlencoded body (Manage2 reads a POST's form only)", async () => {
    server = await startTinyServer((_req, res) => json(res, 200, { status: 1, reason: "OK" }));
    const transport = createTransport({ token: TOKEN, retry: QUICK_RETRY });
    const form = new URLSearchParams({ output: "json", ip: "203.0.113.10", external_notes: "lb:a b" });
    await transport.send({ operation: "manage2.XMLlicenseAdd", method: "POST", url: new URL(`${server.url}/XMLlicenseAdd.cgi`), form, readOnly: false });
    await transport.close();
    expect(server.requests[0]).toMatchObject({ method: "POST", url: "/XMLlicenseAdd.cgi", body: "output=json&ip=203.0.113.10&external_notes=lb%3Aa+b" });
    expect(server.requests[0]?.headers["content-type"]).toBe("application/x-www-form-urlencoded");
  });
});

describe("retry rules", () => {
  const call = (readOnly: boolean): Call => ({ operation: "t", method: readOnly ? "GET" : "POST", url: new URL("http://x"), readOnly });
  const sent = new UpstreamUnavailableError({ operation: "t", reason: "timeout" });
  const notSent = new UpstreamUnavailableError({ operation: "t", reason: "network", code: "ECONNREFUSED", mayHaveTakenEffect: false });
  const answer = (status: number) => ({ status, body: {}, isJson: true });

  it.each([
    ["a read after a timeout", call(true), { error: sent }, 0, true],
    ["a read after a 503", call(true), { answer: answer(503) }, 1, true],
    ["a read after a 404", call(true), { answer: answer(404) }, 0, false],
    ["a read out of retries", call(true), { error: sent }, 2, false],
    ["a charge after a timeout", call(false), { error: sent }, 0, false],
    ["a charge after a 503", call(false), { answer: answer(503) }, 0, false],
    ["a charge that never left", call(false), { error: notSent }, 0, true],
    ["a charge that never left, out of retries", call(false), { error: notSent }, 2, false],
  ] as const)("%s: retry %s", (_case, c, outcome, retriesSoFar, expected) => {
    expect(shouldRetry({ call: c, retriesSoFar, maxRetries: 2, ...outcome })).toBe(expected);
  });

  it("backoff doubles, is capped, and is jittered into the upper half", () => {
    for (let i = 0; i < 50; i++) {
      const first = backoffDelayMs(0, DEFAULT_RETRY);
      expect(first).toBeGreaterThanOrEqual(DEFAULT_RETRY.baseDelayMs / 2);
      expect(first).toBeLessThanOrEqual(DEFAULT_RETRY.baseDelayMs);
      expect(backoffDelayMs(10, DEFAULT_RETRY)).toBeLessThanOrEqual(DEFAULT_RETRY.maxDelayMs);
    }
  });
});
