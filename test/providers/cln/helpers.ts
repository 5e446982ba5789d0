import { createHash } from "node:crypto";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { createClnClient, type ClnClient, type ClnClientOptions } from "../../../src/providers/cln/index.js";
import { createClnSandbox, type ClnSandbox, type ClnSandboxOptions, type RunningClnSandbox } from "../../../src/sandbox/cln/app.js";
import { DEFAULT_CLN_SANDBOX_ACCOUNT, DEFAULT_CLN_SANDBOX_ADMIN_TOKEN } from "../../../src/vocabulary/cln-sandbox-identity.js";

export const LOGIN = DEFAULT_CLN_SANDBOX_ACCOUNT.login;
export const SECRET = DEFAULT_CLN_SANDBOX_ACCOUNT.secretKey;
export const ADMIN = DEFAULT_CLN_SANDBOX_ADMIN_TOKEN;
export const IP = "203.0.113.10";
export const NEW_IP = "203.0.113.20";
export const START = "2025-01-15T10:00:00.000Z";

/** Types by name, so a test says what it buys. */
export const CLOUDLINUX = 1;
export const KERNELCARE = 16;
export const IMUNIFY_AV_PLUS = 40;
export const IMUNIFY_SINGLE = 41;
export const IMUNIFY_30 = 42;
export const IMUNIFY_250 = 43;

/** One clock for the sandbox and the client's tokens, set by the test. */
export class TestClock {
  private current = Date.parse(START);
  readonly now = (): number => this.current;
  readonly date = (): Date => new Date(this.current);
  set(iso: string): void {
    this.current = Date.parse(iso);
  }
  advanceSeconds(seconds: number): void {
    this.current += seconds * 1000;
  }
}

/** CLN's token, computed here apart from the client's and the sandbox's code. */
export function tokenFor(login: string, secret: string, unixSeconds: number): string {
  return `${login}|${unixSeconds}|${createHash("sha1").update(secret + String(unixSeconds)).digest("hex")}`;
}

export interface Raw {
  status: number;
  contentType: string | null;
  text: string;
  body: unknown;
}

export interface ClnHarness {
  sandbox: ClnSandbox;
  running: RunningClnSandbox;
  clock: TestClock;
  /** A client of the sandbox's account on the shared clock; options override. */
  client(options?: Partial<ClnClientOptions>): ClnClient;
  /** GET /api/ipl/<op>.json with these parameters and, unless given, a valid token. */
  raw(op: string, params?: Record<string, string>): Promise<Raw>;
  control(method: "GET" | "POST", path: string, body?: unknown): Promise<Raw>;
}

/**
 * One CLN sandbox per file, reset (state, requests, faults, quirks, clock) before each test;
 * clients made through the harness are closed after the file.
 */
export function useClnSandbox(options: ClnSandboxOptions = {}): () => ClnHarness {
  let harness: ClnHarness | undefined;
  const clients: ClnClient[] = [];
  const clock = new TestClock();
  beforeAll(async () => {
    const sandbox = createClnSandbox({ now: clock.date, ...options });
    const running = await sandbox.listen(0, "127.0.0.1");
    harness = {
      sandbox,
      running,
      clock,
      client(extra = {}) {
        const client = createClnClient({ baseUrl: running.url, login: LOGIN, secretKey: SECRET, clock, retry: { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 20 }, ...extra });
        clients.push(client);
        return client;
      },
      async raw(op, params = {}) {
        const query = new URLSearchParams({ token: tokenFor(LOGIN, SECRET, Math.floor(clock.now() / 1000)), ...params });
        return answerOf(await fetch(`${running.url}/api/ipl/${op}.json?${query.toString()}`));
      },
      async control(method, path, body) {
        const headers: Record<string, string> = { authorization: `Bearer ${ADMIN}` };
        if (body !== undefined) headers["content-type"] = "application/json";
        return answerOf(await fetch(`${running.url}/_sandbox${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }));
      },
    };
  });
  beforeEach(() => {
    harness?.sandbox.reset();
    clock.set(START);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await harness?.running.close();
  });
  return () => {
    if (!harness) throw new Error("CLN sandbox not started");
    return harness;
  };
}

async function answerOf(response: Response): Promise<Raw> {
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, contentType: response.headers.get("content-type"), text, body };
}
