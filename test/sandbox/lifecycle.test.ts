import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/logger.js";
import { createSandbox } from "../../src/sandbox/app.js";
import { startSandboxFromEnv } from "../../src/sandbox/main.js";
import { dataOf, IP, LEGACY, register, RESELLER, startSandbox, useSandbox } from "./helpers.js";

describe("/_sandbox control endpoints", () => {
  const h = useSandbox();

  it.each([
    ["GET", "/ledger"],
    ["GET", "/requests"],
    ["GET", "/licenses"],
    ["POST", "/faults"],
    ["POST", "/reset"],
    ["POST", "/balance"],
  ] as const)("%s %s needs the admin token", async (method, path) => {
    const withReseller = await h().control(method, path, { token: RESELLER, body: method === "POST" ? {} : undefined });
    const without = await h().control(method, path, { token: null, body: method === "POST" ? {} : undefined });

    expect([withReseller.status, without.status]).toEqual([401, 401]);
    expect(without.body).toEqual({ success: false, error: "Unauthorized" });
  });

  it("exposes the ledger, the licences and the recorded requests", async () => {
    await register(h(), IP, "plesk");

    expect((await h().control("GET", "/ledger")).body).toEqual({ charges: h().sandbox.ledger() });
    expect((await h().control("GET", "/licenses")).body).toEqual({ licenses: h().sandbox.licenses() });
    expect((await h().control("GET", "/requests")).body).toEqual({ requests: h().sandbox.requests() });
  });

  it("records every API request in arrival order, without the token", async () => {
    await register(h(), IP, "plesk");
    await h().v1("GET", "/license/list", { token: "wrong" });
    await h().v2("/rc/ReNew.php", { token: LEGACY, ip: IP, type: "plesk" });
    await h().control("GET", "/ledger");

    expect(h().sandbox.requests()).toEqual([
      { seq: 1, at: expect.any(String), via: "v1", op: "register", params: { ip: IP, type: "plesk", billingcycle: 1 }, status: 200 },
      { seq: 2, at: expect.any(String), via: "v1", op: "list", params: {}, status: 401 },
      { seq: 3, at: expect.any(String), via: "v2", op: "renew", params: { ip: IP, type: "plesk" }, status: 200 },
    ]);
  });

  it("sets faults, validating them", async () => {
    const set = await h().control("POST", "/faults", { body: { failNext: 2, latencyMs: 0 } });
    expect(set.body).toEqual({ faults: { latencyMs: 0, errorRate: 0, dropAfterCommitRate: 0, failNext: 2, dropNext: 0, holdMs: 0, holdNext: 0, holdRate: 0 } });
    expect((await h().v1("GET", "/license/list")).status).toBe(503);

    const bad = await h().control("POST", "/faults", { body: { errorRate: 2, typo: 1 } });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ message: "Validation error", errors: { errorRate: [expect.any(String)] } });
  });

  it("sets the balance", async () => {
    const answer = await h().control("POST", "/balance", { body: { balance: 7 } });

    expect(answer.body).toEqual({ balance: 7 });
    expect(h().sandbox.balance()).toBe(7);
    expect((await h().control("POST", "/balance", { body: { balance: -1 } })).status).toBe(422);
  });

  it("resets licences, ledger, requests, faults and balance", async () => {
    await register(h(), IP, "cpanel");
    await h().control("POST", "/faults", { body: { latencyMs: 5 } });

    const answer = await h().control("POST", "/reset");

    expect(answer.status).toBe(200);
    expect(h().sandbox.licenses()).toEqual([]);
    expect(h().sandbox.ledger()).toEqual([]);
    expect(h().sandbox.requests()).toEqual([]);
    expect(h().sandbox.balance()).toBe(1000);
    expect((await h().control("POST", "/faults", { body: {} })).body).toMatchObject({ faults: { latencyMs: 0 } });
  });
});

describe("state persistence and reset", () => {
  let dir: string;
  let statePath: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "sandbox-state-"));
    statePath = path.join(dir, "nested", "upstream.json");
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("a new sandbox on the same state file keeps licences, balance, ledger and created resellers", async () => {
    const first = await startSandbox({ statePath });
    await register(first, IP, "cpanel");
    const bob = dataOf<{ token: string }>(
      await first.v1("POST", "/admin/reseller", {
        token: "sandbox-admin-token",
        body: { name: "Bob", email: "bob@example.com", password: "longenough", role: "reseller", balance: 5, domain: "b.example", commission: 0 },
      }),
    );
    await first.running.close();

    const second = await startSandbox({ statePath });
    try {
      expect(second.sandbox.licenses()).toEqual(first.sandbox.licenses());
      expect(second.sandbox.balance()).toBe(985);
      expect(second.sandbox.ledger()).toEqual(first.sandbox.ledger());
      expect((await second.v1("GET", "/license/list", { token: bob.token })).status).toBe(200);
      expect((await register(second, IP, "cpanel")).status).toBe(422);
    } finally {
      await second.running.close();
    }
  });

  it("writes the file after every change, leaving no temp file behind", async () => {
    const h = await startSandbox({ statePath });
    try {
      await register(h, IP, "plesk");

      expect(JSON.parse(fs.readFileSync(statePath, "utf8"))).toMatchObject({ licenses: [{ ip: IP, type: "plesk" }] });
      expect(fs.readdirSync(path.dirname(statePath))).toEqual(["upstream.json"]);
    } finally {
      await h.running.close();
    }
  });

  it("refuses a state file that is not a sandbox state, naming it", () => {
    fs.mkdirSync(path.dirname(statePath), { recursive: true });
    fs.writeFileSync(statePath, JSON.stringify({ hello: "world" }));

    expect(() => createSandbox({ statePath })).toThrow(statePath);
  });

  it("reset() clears everything and persists the clean state", async () => {
    const h = await startSandbox({ statePath, balance: 200, faults: { latencyMs: 1 } });
    try {
      await register(h, IP, "cpanel");
      h.sandbox.reset();

      expect(h.sandbox.licenses()).toEqual([]);
      expect(h.sandbox.ledger()).toEqual([]);
      expect(h.sandbox.requests()).toEqual([]);
      expect(h.sandbox.balance()).toBe(200);
      expect(createSandbox({ statePath }).licenses()).toEqual([]);
    } finally {
      await h.running.close();
    }
  });
});

function capturingLogger() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { logger: createLogger({ destination, pretty: false }), lines };
}

describe("startSandboxFromEnv", () => {
  it("starts on the given port with the given tokens and balance, logging the URLs but not chosen tokens", async () => {
    const { logger, lines } = capturingLogger();

    const started = await startSandboxFromEnv(
      { SANDBOX_PORT: "0", SANDBOX_TOKEN: "my-secret-token", SANDBOX_BALANCE: "50" },
      logger,
    );
    try {
      const answer = await fetch(`${started.apiUrl}/license/list`, { headers: { authorization: "Bearer my-secret-token" } });
      expect(answer.status).toBe(200);
      expect(started.sandbox.balance()).toBe(50);
      expect(started.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

      const log = lines.join("");
      expect(log).toContain(started.apiUrl);
      expect(log).toContain("sandbox-admin-token");
      expect(log).not.toContain("my-secret-token");
    } finally {
      await started.close();
    }
  });

  it.each([
    ["SANDBOX_PORT", "eighty"],
    ["SANDBOX_BALANCE", "-5"],
    ["SANDBOX_ERROR_RATE", "1.5"],
    ["SANDBOX_LATENCY_MS", "soon"],
  ])("refuses an invalid %s, naming it", async (variable, value) => {
    await expect(startSandboxFromEnv({ [variable]: value }, capturingLogger().logger)).rejects.toThrow(variable);
  });
});
