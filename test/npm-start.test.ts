import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "./helpers/wait.js";

/**
 * `npm start` is the README's way to run the service, and supervisors and operators stop it by
 * signalling npm. The script execs node, so npm's own forwarding of SIGTERM reaches the service:
 * with `sh -c` in between, the shell died and node ran on, an orphan holding the port.
 */

const ROOT = resolve(import.meta.dirname, "..");

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The pids of `pid`'s process tree below it. */
function descendants(pid: number): number[] {
  const ps = spawnSync("ps", ["-eo", "pid=,ppid="], { encoding: "utf8" });
  const pairs = ps.stdout.trim().split("\n").map((l) => l.trim().split(/\s+/).map(Number) as [number, number]);
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of pairs) {
      if (parent !== p) continue;
      out.push(child);
      walk(child);
    }
  };
  walk(pid);
  return out;
}

describe("npm start", () => {
  const started: number[] = [];
  afterEach(() => {
    for (const pid of started.splice(0)) if (alive(pid)) process.kill(pid, "SIGKILL");
  });

  it("stops its whole process tree on one SIGTERM to npm, the service logging its graceful stop", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lb-npm-start-"));
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(RESELLER_|DATABASE_URL$|PRODUCTS_FILE$|CONFIG_FILE$|npm_)/.test(k)));
    const npm = spawn("npm", ["start", "--silent"], {
      cwd: ROOT,
      env: { ...env, HOST: "127.0.0.1", PORT: "0", LOG_LEVEL: "info", DATABASE_PATH: join(dir, "bridge.db") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    for (const s of [npm.stdout, npm.stderr]) s.on("data", (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | string | null>((r) => npm.once("exit", (code, signal) => r(code ?? signal)));
    await waitFor(() => /license-bridge listening on/.test(out), 30_000, "the service to listen");
    const tree = descendants(npm.pid!);
    started.push(npm.pid!, ...tree);
    expect(tree.length).toBeGreaterThan(0);

    npm.kill("SIGTERM");
    await exited;
    await waitFor(() => tree.every((pid) => !alive(pid)), 15_000, "every process under npm to exit");
    expect(out).toMatch(/"msg":"stopped"/);
  });
});
