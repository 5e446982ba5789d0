import { afterAll, beforeAll, beforeEach } from "vitest";
import { createSandbox, type RunningSandbox, type Sandbox, type SandboxOptions } from "../../src/sandbox/app.js";
import { DEFAULT_SANDBOX_TOKENS } from "../../src/vocabulary/sandbox-identity.js";

export const RESELLER = DEFAULT_SANDBOX_TOKENS.reseller;
export const ADMIN = DEFAULT_SANDBOX_TOKENS.admin;
export const LEGACY = DEFAULT_SANDBOX_TOKENS.legacy;

export const IP = "203.0.113.10";
export const OTHER_IP = "203.0.113.20";
export const START = "2025-01-15T10:00:00.000Z";

export interface Answer {
  status: number;
  body: unknown;
  text: string;
}

export class Clock {
  private current = new Date(START);
  readonly now = (): Date => new Date(this.current.getTime());
  set(iso: string): void {
    this.current = new Date(iso);
  }
}

export interface CallOptions {
  token?: string | null;
  body?: unknown;
  /** Sent as is, for malformed-body cases. */
  rawBody?: string;
  contentType?: string;
}

export interface Harness {
  sandbox: Sandbox;
  running: RunningSandbox;
  clock: Clock;
  v1(method: "GET" | "POST", path: string, options?: CallOptions): Promise<Answer>;
  v2(path: string, params: Record<string, string>, options?: { method?: "GET" | "POST"; form?: boolean }): Promise<Answer>;
  control(method: "GET" | "POST", path: string, options?: CallOptions): Promise<Answer>;
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Harness> {
  const clock = new Clock();
  const sandbox = createSandbox({ now: clock.now, ...options });
  const running = await sandbox.listen();
  const call = async (url: string, method: string, options: CallOptions = {}, defaultToken: string | null = RESELLER) => {
    const token = options.token === undefined ? defaultToken : options.token;
    const headers: Record<string, string> = { accept: "application/json" };
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: string | undefined;
    if (options.rawBody !== undefined || options.body !== undefined) {
      headers["content-type"] = options.contentType ?? "application/json";
      body = options.rawBody ?? JSON.stringify(options.body);
    }
    return answerOf(await fetch(url, { method, headers, body }));
  };
  return {
    sandbox,
    running,
    clock,
    v1: (method, path, options) => call(`${running.apiUrl}${path}`, method, options),
    control: (method, path, options) => call(`${running.url}/_sandbox${path}`, method, options, ADMIN),
    v2: async (path, params, options = {}) => {
      const method = options.method ?? "GET";
      if (method === "POST" && options.form === true) {
        const body = new URLSearchParams(params).toString();
        return answerOf(
          await fetch(`${running.legacyUrl}${path}`, {
            method,
            headers: { "content-type": "application/x-www-form-urlencoded" },
            body,
          }),
        );
      }
      return answerOf(await fetch(`${running.legacyUrl}${path}?${new URLSearchParams(params).toString()}`, { method }));
    },
  };
}

/**
 * One sandbox per file, reset (state, requests, faults, clock) before each test: a fresh
 * server per test would cost a new connection every time and slow the suite down.
 */
export function useSandbox(options: SandboxOptions = {}): () => Harness {
  let harness: Harness | undefined;
  beforeAll(async () => {
    harness = await startSandbox(options);
  });
  beforeEach(() => {
    harness?.sandbox.reset();
    harness?.clock.set(START);
  });
  afterAll(async () => {
    await harness?.running.close();
  });
  return () => {
    if (!harness) throw new Error("sandbox not started");
    return harness;
  };
}

async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  let body: unknown = undefined;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text };
}

/** The `data` of a v1 success answer. */
export function dataOf<T = Record<string, unknown>>(answer: Answer): T {
  return (answer.body as { data: T }).data;
}

export function register(h: Harness, ip = IP, type = "cpanel", billingcycle = 1): Promise<Answer> {
  return h.v1("POST", "/license/register", { body: { ip, type, billingcycle } });
}
