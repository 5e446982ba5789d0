import { afterAll, beforeAll, beforeEach } from "vitest";
import { createManage2Client, type Manage2Client, type Manage2ClientOptions } from "../../../src/providers/manage2/index.js";
import { createManage2Sandbox, type Manage2Sandbox, type Manage2SandboxOptions, type RunningManage2Sandbox } from "../../../src/sandbox/manage2/app.js";
import { DEFAULT_MANAGE2_SANDBOX_CREDENTIALS } from "../../../src/vocabulary/manage2-sandbox-identity.js";
import { QUICK_RETRY } from "../../reseller/helpers.js";

export const USER = DEFAULT_MANAGE2_SANDBOX_CREDENTIALS.user;
export const PASSWORD = DEFAULT_MANAGE2_SANDBOX_CREDENTIALS.password;

export const IP = "203.0.113.10";
export const NEW_IP = "203.0.113.20";
/** Packages and group of the sandbox's defaults. */
export const ADMIN = 12345;
export const PRO = 12346;
export const GROUP = 678;
export const OTHER_GROUP = 679;

/** Before the 15th: the next invoice is ahead. */
export const START = "2025-03-10T10:00:00.000Z";

export class Clock {
  private current = new Date(START);
  readonly now = (): Date => new Date(this.current.getTime());
  set(iso: string): void {
    this.current = new Date(iso);
  }
}

export interface Harness {
  sandbox: Manage2Sandbox;
  running: RunningManage2Sandbox;
  clock: Clock;
  /** A client of the sandbox with quick retries; closed after the test file. */
  client(options?: Partial<Manage2ClientOptions>): Manage2Client;
  /** One raw call, as any HTTP client would make it. */
  call(fn: string, params: Record<string, string>, options?: RawCallOptions): Promise<RawAnswer>;
  /** Closes the clients made and the sandbox. */
  close(): Promise<void>;
}

export interface RawCallOptions {
  method?: "GET" | "POST";
  /** Basic credentials; null for none. (Default: the sandbox's) */
  auth?: { user: string; password: string } | null;
  /** Under POST: parameters also put in the URL (which Manage2 ignores then). */
  query?: Record<string, string>;
  /** A query string or body written as is. */
  raw?: string;
}

export interface RawAnswer {
  status: number;
  type: string;
  text: string;
  body: unknown;
}

export async function startManage2(options: Manage2SandboxOptions = {}): Promise<Harness> {
  const clock = new Clock();
  const sandbox = createManage2Sandbox({ now: clock.now, ...options });
  const running = await sandbox.listen();
  const clients: Manage2Client[] = [];
  return {
    sandbox,
    running,
    clock,
    client(extra = {}) {
      const client = createManage2Client({ baseUrl: running.url, user: USER, password: PASSWORD, retry: QUICK_RETRY, ...extra });
      clients.push(client);
      return client;
    },
    async call(fn, params, callOptions = {}) {
      const method = callOptions.method ?? "GET";
      const auth = callOptions.auth === undefined ? { user: USER, password: PASSWORD } : callOptions.auth;
      const headers: Record<string, string> = {};
      if (auth) headers.authorization = `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString("base64")}`;
      const encoded = callOptions.raw ?? new URLSearchParams(params).toString();
      let url = `${running.url}/${fn}.cgi`;
      let body: string | undefined;
      if (method === "GET") url += `?${encoded}`;
      else {
        if (callOptions.query) url += `?${new URLSearchParams(callOptions.query).toString()}`;
        headers["content-type"] = "application/x-www-form-urlencoded";
        body = encoded;
      }
      const response = await fetch(url, { method, headers, body });
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: response.status, type: response.headers.get("content-type") ?? "", text, body: parsed };
    },
    async close() {
      for (const c of clients) await c.close();
      await running.close();
    },
  };
}

/**
 * One sandbox per file, reset (account, ledger, timeline, requests, faults, dialect, clock)
 * before each test, as the reseller sandbox's tests do.
 */
export function useManage2(options: Manage2SandboxOptions = {}): () => Harness {
  let harness: Harness | undefined;
  beforeAll(async () => {
    harness = await startManage2(options);
  });
  beforeEach(() => {
    harness?.sandbox.reset();
    harness?.clock.set(START);
  });
  afterAll(async () => {
    await harness?.close();
  });
  return () => {
    if (!harness) throw new Error("manage2 sandbox not started");
    return harness;
  };
}

/** The JSON body of a raw answer, as a record. */
export const bodyOf = (answer: RawAnswer): Record<string, unknown> => answer.body as Record<string, unknown>;
