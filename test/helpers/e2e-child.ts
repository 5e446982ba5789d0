import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { resolve } from "node:path";
import { signWebhook } from "../../src/webhooks/signature.js";
import { TEST_ADMIN_TOKEN, TEST_SECRET, uniqueId } from "./bridge.js";
import { waitFor } from "./wait.js";

const ROOT = resolve(import.meta.dirname, "../..");

/** A TCP port that was free a moment ago (listen on 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => ok(port));
    });
  });
}

export interface ChildBridge {
  proc: ChildProcess;
  url: string;
  /** stderr and stdout so far, for failure messages. */
  output(): string;
  /** SIGKILL, and resolves once the process is gone. */
  kill(): Promise<void>;
}

/** Runs `node bin/license-bridge.mjs serve` with `env` laid over this process's environment; resolves once /healthz answers. */
export async function spawnBridge(env: Record<string, string>, timeoutMs = 20_000): Promise<ChildBridge> {
  const proc = spawn(process.execPath, [resolve(ROOT, "bin/license-bridge.mjs"), "serve"], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => proc.once("exit", () => r()));
  const url = `http://127.0.0.1:${env.PORT}`;
  const child: ChildBridge = {
    proc,
    url,
    output: () => out,
    async kill() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
      await exited;
    },
  };
  try {
    await waitFor(
      async () => {
        if (proc.exitCode !== null) throw new Error(`bridge exited with ${proc.exitCode}: ${out}`);
        return (await fetch(`${url}/healthz`)).ok;
      },
      timeoutMs,
      "the child bridge to answer /healthz",
    );
  } catch (err) {
    await child.kill();
    throw new Error(`${(err as Error).message}\n--- child output ---\n${out}`);
  }
  return child;
}

/**
 * `wait`, with what is needed to explain a timeout in its failure: the child bridges' output and
 * whatever else `context` gives (e.g. the sandbox's requests). Timing failures under a loaded
 * machine are otherwise a bare "timed out".
 */
export async function explained<T>(wait: Promise<T>, context: () => Record<string, unknown>): Promise<T> {
  try {
    return await wait;
  } catch (err) {
    const parts = Object.entries(context()).map(([k, v]) => `--- ${k} ---\n${typeof v === "string" ? v : JSON.stringify(v, null, 1)}`);
    throw new Error([(err as Error).message, ...parts].join("\n"));
  }
}

/** Signs and posts an event to a bridge at `url`. */
export async function sendTo(url: string, event: unknown, id = uniqueId()): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const body = JSON.stringify(event);
  const res = await fetch(`${url}/webhooks/billing`, {
    method: "POST",
    headers: { "content-type": "application/json", ...signWebhook(TEST_SECRET, id, body) },
    body,
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown>, headers: res.headers };
}

/** GET /readyz of a bridge at `url`: status and body. */
export async function readyz(url: string): Promise<{ status: number; body: { status?: string; reasons?: string[] } }> {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: (await res.json().catch(() => ({}))) as { status?: string; reasons?: string[] } };
}

export async function adminGet(url: string, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
}

export interface FinishedBridge {
  /** The exit code; null when the process was still running at the deadline (and was killed). */
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node bin/license-bridge.mjs serve` and waits for it to end by itself, for start-ups that
 * must fail. A process still running after `timeoutMs` is killed and reported with `code: null`.
 */
export function runBridgeToExit(env: Record<string, string>, timeoutMs = 20_000): Promise<FinishedBridge> {
  const proc = spawn(process.execPath, [resolve(ROOT, "bin/license-bridge.mjs"), "serve"], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  proc.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  proc.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((done) => {
    let stillRunning = false;
    const timer = setTimeout(() => {
      stillRunning = true;
      proc.kill("SIGKILL");
    }, timeoutMs);
    proc.once("close", (code) => {
      clearTimeout(timer);
      done({ code: stillRunning ? null : code, stdout, stderr });
    });
  });
}
