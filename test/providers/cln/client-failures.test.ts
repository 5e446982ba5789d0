import type http from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import {
  AlreadyExistsError,
  UnauthorizedError,
  UnexpectedAnswerError,
  UpstreamUnavailableError,
  ValidationError,
  type ResellerError,
} from "../../../src/reseller/errors.js";
import { createClnClient } from "../../../src/providers/cln/index.js";
import type { UpstreamCallReport } from "../../../src/reseller/transport.js";
import { captureLogs, json, rejection, startTinyServer, until, type TinyServer } from "../../reseller/helpers.js";
import { IMUNIFY_SINGLE, IP, KERNELCARE, LOGIN, NEW_IP, SECRET, START, useClnSandbox } from "./helpers.js";

const START_SECONDS = Date.parse(START) / 1000;

describe("CLN client: success false is an error carrying CLN's message, never a success", () => {
  const h = useClnSandbox();

  it("a refused register is an error with the message, that did nothing", async () => {
    h().sandbox.failNextRegister("The IP address is taken");

    const error = await rejection(h().client().register({ ip: IP, type: IMUNIFY_SINGLE }));

    expect(error).toBeInstanceOf(AlreadyExistsError);
    expect(error).toMatchObject({
      operation: "cln.register",
      message: "cln.register: The IP address is taken",
      upstreamMessage: "The IP address is taken",
      status: 200,
      mayHaveTakenEffect: false,
      raw: { success: false, message: "The IP address is taken", data: null },
    });
    expect(h().sandbox.ledger()).toEqual([]);
  });

  it("another customer's licence on the IP is already exists, with CLN's words", async () => {
    h().sandbox.holdByAnother(IP, IMUNIFY_SINGLE);

    const error = await rejection(h().client().register({ ip: IP, type: IMUNIFY_SINGLE }));

    expect(error).toBeInstanceOf(AlreadyExistsError);
    expect((error as ResellerError).upstreamMessage).toBe(`IP license of type 41 for ${IP} is already registered by another customer`);
  });

  it("a message with no known words is still an error, carrying it", async () => {
    h().sandbox.failNextRegister("Computer says no");

    const error = await rejection(h().client().register({ ip: IP, type: IMUNIFY_SINGLE }));

    expect(error).toBeInstanceOf(UnexpectedAnswerError);
    expect(error).toMatchObject({ message: "cln.register: Computer says no", mayHaveTakenEffect: false });
  });

  it("a refusal is a refusal at whatever HTTP status it comes", async () => {
    h().sandbox.setQuirks({ refusalStatus: 422 });
    h().sandbox.holdByAnother(IP, IMUNIFY_SINGLE);

    const error = await rejection(h().client().register({ ip: IP, type: IMUNIFY_SINGLE }));

    expect(error).toBeInstanceOf(AlreadyExistsError);
    expect(error).toMatchObject({ status: 422, message: `cln.register: IP license of type 41 for ${IP} is already registered by another customer (HTTP 422)` });
  });

  it("CLN's 'Unexpected server error' on a register may have taken effect", async () => {
    h().sandbox.failNextRegister("Unexpected server error");

    const error = await rejection(h().client().register({ ip: IP, type: IMUNIFY_SINGLE }));

    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error).toMatchObject({ upstreamMessage: "Unexpected server error", mayHaveTakenEffect: true, retryable: true });
  });

  it("CLN's refusal of an invalid type names the field", async () => {
    const server = await startTinyServer((_req, res) => json(res, 200, { success: false, message: "Invalid license type: 41", data: null }));
    const client = createClnClient({ baseUrl: server.url, login: LOGIN, secretKey: SECRET });
    try {
      const error = await rejection(client.register({ ip: IP, type: IMUNIFY_SINGLE }));

      expect(error).toBeInstanceOf(ValidationError);
      expect(error).toMatchObject({ errors: { type: ["Invalid license type: 41"] }, mayHaveTakenEffect: false });
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe("CLN client: authentication", () => {
  const h = useClnSandbox();

  it("a wrong secret key is unauthorized, blocks the job, and buys nothing", async () => {
    const error = await rejection(h().client({ secretKey: "not-the-key" }).register({ ip: IP, type: IMUNIFY_SINGLE }));

    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(error).toMatchObject({ upstreamMessage: "Not authorized", mayHaveTakenEffect: false, disposition: "block", errorCode: "upstream_unauthorized" });
    expect(h().sandbox.ledger()).toEqual([]);
  });

  it("an unknown login is unauthorized", async () => {
    expect(await rejection(h().client({ login: "nobody" }).list())).toBeInstanceOf(UnauthorizedError);
  });

  it("a clock too far from CLN's makes tokens it refuses", async () => {
    const slow = { now: () => Date.parse(START) - 10 * 60_000 };

    expect(await rejection(h().client({ clock: slow }).list())).toBeInstanceOf(UnauthorizedError);
  });
});

describe("CLN client: a lost answer", () => {
  const h = useClnSandbox();

  it("a register whose answer is lost may have taken effect, and did: one purchase; registering again answers it and buys nothing", async () => {
    const client = h().client();
    h().sandbox.setFaults({ dropNext: 1 });

    const error = await rejection(client.register({ ip: IP, type: IMUNIFY_SINGLE }));

    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error).toMatchObject({ operation: "cln.register", reason: "network", mayHaveTakenEffect: true });
    expect(h().sandbox.requests()).toMatchObject([{ op: "register", status: "dropped" }]);
    expect(await client.find({ ip: IP, type: IMUNIFY_SINGLE })).toMatchObject({ ip: IP, type: 41 });
    expect(await client.register({ ip: IP, type: IMUNIFY_SINGLE })).toMatchObject({ ip: IP, type: 41 });
    expect(h().sandbox.ledger()).toHaveLength(1);
  });

  it("a remove whose answer is lost may have taken effect; removing again answers removed false", async () => {
    const client = h().client();
    await client.register({ ip: IP, type: IMUNIFY_SINGLE });
    h().sandbox.setFaults({ dropNext: 1 });

    expect(await rejection(client.remove({ ip: IP, type: IMUNIFY_SINGLE }))).toMatchObject({ mayHaveTakenEffect: true });

    expect(await client.remove({ ip: IP, type: IMUNIFY_SINGLE })).toEqual({ removed: false });
    expect(h().sandbox.licenses()).toEqual([]);
  });

  it("a register held past the client's timeout times out, may have taken effect, and CLN makes it anyway", async () => {
    h().sandbox.setFaults({ holdMs: 1_500, holdNext: 1 });

    const error = await rejection(h().client({ timeoutMs: 200 }).register({ ip: IP, type: IMUNIFY_SINGLE }));

    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error).toMatchObject({ reason: "timeout", mayHaveTakenEffect: true, mayStillTakeEffect: true });
    expect(h().sandbox.requests()).toHaveLength(1);
    await until(() => h().sandbox.requests()[0]?.status === 200, 10_000);
    expect(h().sandbox.requests()[0]).toMatchObject({ op: "register", held: true });
    expect(h().sandbox.licenses()).toMatchObject([{ ip: IP, type: 41 }]);
    expect(h().sandbox.ledger()).toHaveLength(1);
    expect(h().sandbox.timeline()).toMatchObject([{ event: "acquired", ip: IP, type: 41 }]);
  });

  it("a 503 page on a register may have taken effect and is not sent again", async () => {
    h().sandbox.setFaults({ failNext: 1 });

    const error = await rejection(h().client().register({ ip: IP, type: IMUNIFY_SINGLE }));

    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error).toMatchObject({ status: 503, mayHaveTakenEffect: true, upstreamMessage: "503 Service Temporarily Unavailable" });
    expect(h().sandbox.requests()).toHaveLength(1);
  });

  it("a 503 page on a read is retried, and the read then succeeds", async () => {
    h().sandbox.setFaults({ failNext: 2 });

    expect(await h().client().list()).toEqual([]);
    expect(h().sandbox.requests().map((r) => r.status)).toEqual([503, 503, 200]);
  });
});

describe("CLN client: an answer it cannot read", () => {
  let server: TinyServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const answering = async (handle: (res: http.ServerResponse) => void) => {
    server = await startTinyServer((_req, res) => handle(res));
    return createClnClient({ baseUrl: server.url, login: LOGIN, secretKey: SECRET, retry: { maxRetries: 0, baseDelayMs: 1 } });
  };
  const html = (status: number, text: string) => (res: http.ServerResponse) => {
    res.writeHead(status, { "content-type": "text/html" });
    res.end(text);
  };

  it("an HTML page at HTTP 200 after a register is unexpected and may have taken effect", async () => {
    const client = await answering(html(200, "<html><head><title>Maintenance</title></head></html>"));

    const error = await rejection(client.register({ ip: IP, type: IMUNIFY_SINGLE }));

    expect(error).toBeInstanceOf(UnexpectedAnswerError);
    expect(error).toMatchObject({ mayHaveTakenEffect: true, upstreamMessage: "Maintenance", message: "cln.register: unexpected answer (not JSON, HTTP 200)" });
    await client.close();
  });

  it("a gateway's 502 page after a register is unavailable, and may still take effect", async () => {
    const client = await answering(html(502, "<html><head><title>502 Bad Gateway</title></head></html>"));

    const error = await rejection(client.register({ ip: IP, type: IMUNIFY_SINGLE }));

    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error).toMatchObject({ status: 502, mayHaveTakenEffect: true, mayStillTakeEffect: true });
    await client.close();
  });

  it("JSON cut short after a remove is unexpected and may have taken effect", async () => {
    const client = await answering((res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"success": true, "da');
    });

    const error = await rejection(client.remove({ ip: IP, type: IMUNIFY_SINGLE }));

    expect(error).toMatchObject({ kind: "unexpected", mayHaveTakenEffect: true, message: "cln.remove: unexpected answer (a JSON body that does not parse, HTTP 200)" });
    await client.close();
  });

  it("success spelled as a string is not success", async () => {
    const client = await answering((res) => json(res, 200, { success: "true", data: { ip: IP, type: 41, registered: false, created: "2025-01-15T06:00-0400" } }));

    const error = await rejection(client.register({ ip: IP, type: IMUNIFY_SINGLE }));

    expect(error).toMatchObject({ kind: "unexpected", mayHaveTakenEffect: true, message: "cln.register: unexpected answer (no boolean success, HTTP 200)" });
    await client.close();
  });

  it("a success whose data is not a licence is unexpected and may have taken effect", async () => {
    const client = await answering((res) => json(res, 200, { success: true, message: "", data: null }));

    const error = await rejection(client.register({ ip: IP, type: IMUNIFY_SINGLE }));

    expect(error).toMatchObject({ kind: "unexpected", mayHaveTakenEffect: true });
    await client.close();
  });

  it("a register answering another licence than the one asked for is no proof of purchase", async () => {
    const client = await answering((res) => json(res, 200, { success: true, message: "", data: { ip: NEW_IP, type: 41, registered: false, created: "2025-01-15T06:00-0400" } }));

    const error = await rejection(client.register({ ip: IP, type: IMUNIFY_SINGLE }));

    expect(error).toMatchObject({ kind: "unexpected", mayHaveTakenEffect: true, message: `cln.register: answered licence ${NEW_IP} type 41, not ${IP} type 41` });
    await client.close();
  });

  it("a remove answering neither true nor false is unexpected", async () => {
    const client = await answering((res) => json(res, 200, { success: true, data: "done" }));

    expect(await rejection(client.remove({ ip: IP, type: IMUNIFY_SINGLE }))).toMatchObject({ kind: "unexpected", mayHaveTakenEffect: true });
    await client.close();
  });

  it("a list item without a type fails the list rather than being skipped, and a read changed nothing", async () => {
    const client = await answering((res) => json(res, 200, { success: true, data: [{ ip: IP, type: 16 }, { ip: NEW_IP }] }));

    const error = await rejection(client.list());

    expect(error).toMatchObject({ kind: "unexpected", mayHaveTakenEffect: false });
    expect((error as Error).message).toContain("data.1.type");
    await client.close();
  });

  it("reads answers liberally: numbers as strings, booleans as 1/0 or text, missing message, times with seconds or Z", async () => {
    const client = await answering((res) =>
      json(res, 200, {
        success: true,
        data: [
          { ip: IP, type: "16", registered: 1, created: "2025-01-15T06:00:30-04:00" },
          { ip: NEW_IP, type: 41, registered: "false", created: "2025-01-15T10:00Z" },
          { ip: "203.0.113.30", type: 1, registered: null, created: null },
        ],
      }),
    );

    expect(await client.list()).toEqual([
      { ip: IP, type: 16, registered: true, created: "2025-01-15T06:00:30-04:00", createdAt: "2025-01-15T10:00:30.000Z" },
      { ip: NEW_IP, type: 41, registered: false, created: "2025-01-15T10:00Z", createdAt: START },
      { ip: "203.0.113.30", type: 1, registered: false, created: null, createdAt: null },
    ]);
    await client.close();
  });
});

describe("CLN client: secrets", () => {
  let server: TinyServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("keeps the secret key, the token and its hash out of every log line, error and logged URL, even when an answer quotes them", async () => {
    const seen: string[] = [];
    server = await startTinyServer((req, res, _seen, index) => {
      const token = new URL(req.url ?? "", "http://x").searchParams.get("token") ?? "";
      seen.push(token);
      const hash = token.split("|")[2] ?? "";
      if (index === 0) json(res, 200, { success: true, data: [], echo: `token ${token}`, hash, key: SECRET });
      else json(res, 200, { success: false, message: `Not authorized: ${token} (${hash}, ${SECRET})`, data: null });
    });
    const logs = captureLogs();
    const client = createClnClient({ baseUrl: server.url, login: LOGIN, secretKey: SECRET, logger: logs.logger, clock: { now: () => Date.parse(START) } });

    await client.list();
    const error = await rejection(client.register({ ip: IP, type: KERNELCARE }));
    await client.close();

    const hash = seen[0]!.split("|")[2]!;
    expect(seen[0]).toBe(`${LOGIN}|${START_SECONDS}|${hash}`);
    const shown = [logs.text(), (error as Error).message, JSON.stringify(error), JSON.stringify((error as ResellerError).raw)].join("\n");
    for (const secret of [SECRET, hash, seen[0]!, encodeURIComponent(seen[0]!)]) expect(shown).not.toContain(secret);
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect(logs.lines()[0]?.url).toBe(`${server.url}/api/ipl/list.json?token=[redacted]`);
    expect(logs.lines()[1]?.url).toBe(`${server.url}/api/ipl/register.json?ip=${IP}&type=16&token=[redacted]`);
  });
});

describe("CLN client: metrics", () => {
  const h = useClnSandbox();

  it("tells its observer each call's operation and outcome", async () => {
    const reports: UpstreamCallReport[] = [];
    const client = h().client({ observer: { callFinished: (r) => reports.push(r) } });
    await client.register({ ip: IP, type: KERNELCARE });
    h().sandbox.holdByAnother(NEW_IP, KERNELCARE);
    await rejection(client.register({ ip: NEW_IP, type: KERNELCARE }));

    expect(reports.map((r) => [r.operation, r.method, r.outcome, r.status])).toEqual([
      ["cln.register", "GET", "ok", 200],
      ["cln.register", "GET", "already_exists", 200],
    ]);
  });
});
