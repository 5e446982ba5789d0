import { execFile, execFileSync, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { inject } from "vitest";

/**
 * A scratch PostgreSQL cluster for one vitest run (started by test/setup/postgres.ts), and a
 * fresh database in it per test. Durability is part of what the store promises, so the server
 * runs with fsync on; it is small otherwise (16 MB of shared buffers).
 */

/**
 * What the global setup hands the test files: where the cluster is (and `migrated`, the name of
 * a database with every migration applied, which a bridge's database is copied from), or why
 * there is none.
 */
export type PostgresProvided = { url: string; migrated: string } | { skip: string };

declare module "vitest" {
  export interface ProvidedContext {
    postgres: PostgresProvided;
  }
}

/** LB_REQUIRE_POSTGRES=1 (CI): a missing or broken PostgreSQL fails the run instead of skipping its tests. */
export const POSTGRES_REQUIRED = process.env.LB_REQUIRE_POSTGRES === "1";

export interface ScratchCluster {
  /** The superuser's URL, database `postgres`. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Where initdb and pg_ctl are: LB_POSTGRES_BIN when set, else the newest Debian install, else
 * pg_config's on PATH; undefined when none.
 */
export function findPostgresBin(): string | undefined {
  const chosen = process.env.LB_POSTGRES_BIN;
  if (chosen) return existsSync(join(chosen, "initdb")) ? chosen : undefined;
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], "bin");
  }
  const which = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" });
  const dir = which.status === 0 ? which.stdout.trim() : "";
  return dir && existsSync(join(dir, "initdb")) ? dir : undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/**
 * How to run the server's programs. PostgreSQL refuses to run as root; when the tests do (CI on
 * Debian), initdb and the server run as the `postgres` account the Debian package creates, via
 * runuser, in a folder handed over to it.
 */
function asServerUser(): { prefix: string[]; chown?: { uid: number; gid: number } } | { skip: string } {
  if (process.getuid?.() !== 0) return { prefix: [] };
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
  let uid: number;
  let gid: number;
  try {
    uid = id("-u");
    gid = id("-g");
  } catch {
    return { skip: "the tests run as root, which PostgreSQL refuses, and there is no `postgres` account to run the server as" };
  }
  if (spawnSync("runuser", ["--help"]).error) return { skip: "the tests run as root and `runuser` is missing, so the server cannot run as `postgres`" };
  return { prefix: ["runuser", "-u", "postgres", "--"], chown: { uid, gid } };
}

/** Runs a program without blocking the event loop (vitest's main process keeps its timers and workers going meanwhile). */
function run(prefix: string[], command: string, args: string[]): Promise<void> {
  const [file, ...rest] = [...prefix, command, ...args];
  return new Promise((resolve, reject) => {
    execFile(file!, rest, { encoding: "utf8", timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${command} failed (${err.message}):\n${stdout}${stderr}`)) : resolve(),
    );
  });
}

/**
 * initdb in a temp folder and a server on 127.0.0.1 at a free port (its unix socket in that
 * folder too); `{ skip }` with the reason when PostgreSQL is not installed or cannot run here.
 */
export async function startScratchCluster(): Promise<ScratchCluster | { skip: string }> {
  const bin = findPostgresBin();
  if (!bin) {
    const where = process.env.LB_POSTGRES_BIN ? `no initdb in LB_POSTGRES_BIN=${process.env.LB_POSTGRES_BIN}` : "no /usr/lib/postgresql/*/bin/initdb, no pg_config on PATH";
    return { skip: `PostgreSQL is not installed (${where})` };
  }
  const user = asServerUser();
  if ("skip" in user) return user;
  const dir = mkdtempSync(join(tmpdir(), "lb-pg-"));
  if (user.chown) chownSync(dir, user.chown.uid, user.chown.gid);
  const data = join(dir, "data");
  const log = join(dir, "server.log");
  const pgCtl = join(bin, "pg_ctl");
  try {
    // --no-sync: initdb's own files need no fsync for a cluster that lives one test run; the
    // server below runs with fsync on.
    await run(user.prefix, join(bin, "initdb"), ["-D", data, "-U", "lb", "--auth=trust", "--no-sync", "-E", "UTF8", "--no-locale"]);
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const settings = [
        `-c port=${port}`,
        "-c listen_addresses=127.0.0.1",
        `-c unix_socket_directories=${dir}`,
        "-c fsync=on",
        "-c synchronous_commit=on",
        "-c shared_buffers=16MB",
        "-c max_connections=200",
      ].join(" ");
      try {
        await run(user.prefix, pgCtl, ["-D", data, "-l", log, "-w", "-t", "60", "-o", settings, "start"]);
      } catch (err) {
        // Another process took the port between our look and the server's bind: another port.
        if (attempt < 3) continue;
        throw err;
      }
      return {
        url: `postgres://lb@127.0.0.1:${port}/postgres`,
        async stop() {
          try {
            // Immediate: no shutdown checkpoint for a cluster about to be deleted.
            await run(user.prefix, pgCtl, ["-D", data, "-m", "immediate", "-w", "stop"]);
          } finally {
            removeInBackground(dir);
          }
        },
      };
    }
  } catch (err) {
    const serverLog = existsSync(log) ? `\nserver log:\n${readFileSync(log, "utf8").slice(-2000)}` : "";
    rmSync(dir, { recursive: true, force: true });
    return { skip: `PostgreSQL is installed but would not start: ${(err as Error).message}${serverLog}` };
  }
}

/**
 * Deletes `dir` in a process of its own, which the run does not wait for. A run's cluster holds a
 * database per test (over 10 MB each: gigabytes in all), and deleting it took most of a minute
 * at the end of a run on a busy disk. Where `rm` cannot be started, here and now.
 */
function removeInBackground(dir: string): void {
  try {
    const rm = spawn("rm", ["-rf", "--", dir], { detached: true, stdio: "ignore" });
    rm.on("error", () => rmSync(dir, { recursive: true, force: true }));
    rm.unref();
  } catch {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Why the PostgreSQL tests of this run are skipped, or undefined when they run. */
export function postgresSkipReason(): string | undefined {
  const provided = inject("postgres");
  if (!provided) return "test/setup/postgres.ts did not run (it is a globalSetup of vitest.config.ts)";
  return "skip" in provided ? provided.skip : undefined;
}

/**
 * A new database in the run's cluster, and its URL: empty, or with `migrated` a copy of the
 * template the global setup migrated (see createMigratedTemplate), so a bridge starts on it
 * without applying the migrations again: about 0.3 s of each PostgreSQL test's start-up. Tests of
 * migrating itself ask for an empty one.
 */
export async function freshDatabase(options: { migrated?: boolean } = {}): Promise<{ name: string; url: string }> {
  const provided = inject("postgres");
  if (!provided || "skip" in provided) throw new Error(`no PostgreSQL for this run: ${provided ? provided.skip : "no global setup"}`);
  const name = `lb_${randomBytes(6).toString("hex")}`;
  const template = options.migrated ? ` TEMPLATE ${provided.migrated}` : "";
  await asAdmin(provided.url, (admin) => admin.query(`CREATE DATABASE ${name}${template}`));
  return { name, url: databaseUrl(provided.url, name) };
}

/**
 * Makes `name` in the cluster at `url`, applies every migration to it with `migrate` (the store's
 * own migrator, given the database's URL), and leaves no session on it, so that CREATE DATABASE
 * can copy it. Called once per run by the global setup.
 */
export async function createMigratedTemplate(url: string, name: string, migrate: (url: string) => Promise<void>): Promise<void> {
  await asAdmin(url, (admin) => admin.query(`CREATE DATABASE ${name}`));
  await migrate(databaseUrl(url, name));
}

/**
 * Takes a test's database from under whoever is connected to it, as an operator's DROP DATABASE
 * or a lost volume would take it from a running service: their sessions are ended by the server
 * (57P01, as DROP DATABASE ... WITH (FORCE) ends them) and every connection opened after is
 * refused because no database has that name (3D000). It is renamed away rather than dropped:
 * DROP DATABASE waits for a checkpoint of the whole scratch cluster, which beside other suites'
 * writes took half a minute; the service cannot tell the two apart. New connections are shut out
 * first, so none opens between the sessions' end and the rename.
 */
export async function takeDatabaseAway(name: string): Promise<void> {
  const provided = inject("postgres");
  if (!provided || "skip" in provided) throw new Error(`no PostgreSQL for this run: ${provided ? provided.skip : "no global setup"}`);
  await asAdmin(provided.url, async (admin) => {
    await admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`);
    await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [name]);
    // pg_terminate_backend only signals: the rename waits until the sessions have gone.
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`ALTER DATABASE ${name} RENAME TO ${name}_gone`);
        return;
      } catch (err) {
        // 55006 object_in_use: "database is being accessed by other users", for a moment.
        if ((err as { code?: string }).code !== "55006" || attempt >= 200) throw err;
        await new Promise((r) => setTimeout(r, 10));
      }
    }
  });
}

async function asAdmin(url: string, run: (admin: pg.Client) => Promise<unknown>): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await run(admin);
  } finally {
    await admin.end();
  }
}

function databaseUrl(clusterUrl: string, name: string): string {
  const url = new URL(clusterUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * A connection of its own to a test's database, for what no Store operation may do and the
 * concurrency tests need: hold a lock or an uncommitted row as another instance would mid-way,
 * see which sessions wait or LISTEN, cut one, or play a newer release. All the tests' own SQL
 * is here, in one file.
 */
export interface Session {
  /** Starts a transaction that inserts a job with this unique key and leaves it uncommitted. */
  holdUncommittedJob(uniqueKey: string): Promise<void>;
  /** Starts a transaction that holds an ACCESS EXCLUSIVE lock on `table`. */
  holdTableLock(table: "migrations" | "jobs" | "services"): Promise<void>;
  /** Ends what the two above started, writing nothing. */
  rollback(): Promise<void>;
  /** How many sessions of this database wait on this wait event ("advisory", "transactionid", ...). */
  waiting(waitEvent: string): Promise<number>;
  /** The server process ids of the sessions that LISTEN on `channel` (and are idle: the LISTEN is done). */
  listening(channel: string): Promise<number[]>;
  /** Ends the session of that server process, as a network cut or a server restart would. */
  terminate(pid: number): Promise<void>;
  /** Records a migration this code does not know, as a newer release would have. */
  recordMigration(id: number, name: string): Promise<void>;
  /** Writes rows into `table` as an older release did, for a migration test: a database at an earlier migration has columns today's Store statements do not match. */
  insertRows(table: string, rows: readonly Record<string, string | number | null>[]): Promise<void>;
  close(): Promise<void>;
}

export async function openSession(url: string): Promise<Session> {
  const client = new pg.Client({ connectionString: url, application_name: "license-bridge test session" });
  await client.connect();
  const count = async (sql: string, values: unknown[]) => (await client.query<{ n: string }>(sql, values)).rows.map((r) => Number(r.n));
  return {
    async holdUncommittedJob(uniqueKey) {
      await client.query("BEGIN");
      await client.query("INSERT INTO jobs (kind, unique_key, state, max_attempts, run_at, created_at, updated_at) VALUES ('held', $1, 'queued', 1, 0, 0, 0)", [uniqueKey]);
    },
    async holdTableLock(table) {
      await client.query("BEGIN");
      await client.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    },
    async rollback() {
      await client.query("ROLLBACK");
    },
    async waiting(waitEvent) {
      const [n] = await count("SELECT COUNT(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event = $1", [waitEvent]);
      return n ?? 0;
    },
    async listening(channel) {
      return count("SELECT pid AS n FROM pg_stat_activity WHERE datname = current_database() AND state = 'idle' AND query = $1 ORDER BY pid", [`LISTEN ${channel}`]);
    },
    async terminate(pid) {
      await client.query("SELECT pg_terminate_backend($1)", [pid]);
    },
    async recordMigration(id, name) {
      await client.query("INSERT INTO migrations (id, name, applied_at) VALUES ($1, $2, $3)", [id, name, new Date().toISOString()]);
    },
    async insertRows(table, rows) {
      for (const row of rows) {
        const columns = Object.keys(row);
        await client.query(`INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(", ")})`, Object.values(row));
      }
    },
    async close() {
      await client.end();
    },
  };
}
