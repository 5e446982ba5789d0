// A scratch PostgreSQL cluster for `bench:scale`, as test/helpers/postgres.ts makes one for the
// tests (that module reads vitest's provided context, so the bench cannot import it). Unlike the
// tests' cluster this one is given room (128 MB of shared buffers): 100,000 services and two
// million rows are measured, not a few dozen.
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export interface BenchCluster {
  /** The superuser's URL to a database of its own. */
  url: string;
  stop(): Promise<void>;
}

/** initdb and pg_ctl: LB_POSTGRES_BIN, else the newest Debian install, else pg_config's. */
function findBin(): string | undefined {
  if (process.env.LB_POSTGRES_BIN) return existsSync(join(process.env.LB_POSTGRES_BIN, "initdb")) ? process.env.LB_POSTGRES_BIN : undefined;
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const v = readdirSync(root)
      .filter((d) => existsSync(join(root, d, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a))[0];
    if (v) return join(root, v, "bin");
  }
  const which = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" });
  const dir = which.status === 0 ? which.stdout.trim() : "";
  return dir && existsSync(join(dir, "initdb")) ? dir : undefined;
}

function run(prefix: string[], command: string, args: string[]): Promise<void> {
  const [file, ...rest] = [...prefix, command, ...args];
  return new Promise((resolve, reject) =>
    execFile(file!, rest, { encoding: "utf8", timeout: 120_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${command}: ${err.message}\n${stdout}${stderr}`)) : resolve())),
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => (typeof a === "object" && a ? resolve(a.port) : reject(new Error("no port"))));
    });
  });
}

/** A started cluster with an empty database `bench`, or why there is none (printed by the caller, which skips PostgreSQL). */
export async function startBenchCluster(): Promise<BenchCluster | { skip: string }> {
  const bin = findBin();
  if (!bin) return { skip: "PostgreSQL is not installed (no initdb found): PostgreSQL skipped" };
  let prefix: string[] = [];
  let owner: { uid: number; gid: number } | undefined;
  // PostgreSQL refuses to run as root: then as the Debian package's `postgres` account.
  if (process.getuid?.() === 0) {
    try {
      owner = { uid: Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" })), gid: Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" })) };
    } catch {
      return { skip: "running as root and there is no `postgres` account: PostgreSQL skipped" };
    }
    prefix = ["runuser", "-u", "postgres", "--"];
  }
  const dir = mkdtempSync(join(tmpdir(), "lb-bench-pg-"));
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const data = join(dir, "data");
  const port = await freePort();
  try {
    await run(prefix, join(bin, "initdb"), ["-D", data, "-U", "lb", "--auth=trust", "--no-sync", "-E", "UTF8", "--no-locale"]);
    const settings = [`-c port=${port}`, "-c listen_addresses=127.0.0.1", `-c unix_socket_directories=${dir}`, "-c shared_buffers=128MB", "-c max_connections=100"].join(" ");
    await run(prefix, join(bin, "pg_ctl"), ["-D", data, "-l", join(dir, "server.log"), "-w", "-t", "60", "-o", settings, "start"]);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return { skip: `PostgreSQL would not start (${(err as Error).message.split("\n")[0]}): PostgreSQL skipped` };
  }
  const admin = new pg.Client({ connectionString: `postgres://lb@127.0.0.1:${port}/postgres` });
  await admin.connect();
  await admin.query("CREATE DATABASE bench");
  await admin.end();
  return {
    url: `postgres://lb@127.0.0.1:${port}/bench`,
    async stop() {
      try {
        await run(prefix, join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
