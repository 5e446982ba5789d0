import { createServer as createHttpServer, type IncomingHttpHeaders } from "node:http";
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { systemClock } from "../../src/clock.js";
import { checkMigrations, checkUpstream } from "../../src/admin/health-routes.js";
import { openDatabase } from "../../src/store/sqlite/database.js";
import { migrate, readMigrations } from "../../src/store/sqlite/migrations.js";
import { sqliteStore } from "../../src/store/sqlite/store.js";
import type { TestBridge } from "../helpers/bridge.js";
import { usePair, usePairPerFile } from "../helpers/e2e-harness.js";
import { holdWriteLock, migrateBeyondCode } from "../helpers/sqlite.js";
import { useProviderBridges } from "../helpers/providers.js";

interface Readiness {
  status: string;
  reasons?: string[];
  checks: Record<string, { status: string; detail?: string }>;
}

async function readyz(bridge: TestBridge): Promise<{ status: number; body: Readiness }> {
  const res = await fetch(`${bridge.url}/readyz`);
  return { status: res.status, body: (await res.json()) as Readiness };
}

describe("/healthz and /readyz", () => {
  describe("on a sandbox and bridge the file's tests share", () => {
    const pair = usePairPerFile();

    it("/healthz answers ok without auth", async () => {
      const { bridge } = pair();
      const res = await fetch(`${bridge.url}/healthz`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: "ok" });
    });

    it("is ready when the database is writable, migrations are current and the upstream answers", async () => {
      const { bridge } = pair();
      const { status, body } = await readyz(bridge);
      expect(status).toBe(200);
      expect(body.status).toBe("ready");
      expect(body.checks.database!.status).toBe("ok");
      expect(body.checks.migrations!.status).toBe("ok");
      expect(body.checks.upstream!.status).toBe("ok");
    });
  });

  describe("with a part broken, on a sandbox and bridge per test", () => {
    // Each breaks what it checks for good, or for the rest of the bridge's life: it closes the
    // sandbox, migrates the database beyond the code, or stops the job runner.
    const pair = usePair();

    it("is not ready, naming the upstream, when the reseller cannot be reached", async () => {
      const { sb, bridge } = pair();
      await sb.running.close();
      const { status, body } = await readyz(bridge);
      expect(status).toBe(503);
      expect(body.status).toBe("not ready");
      expect(body.reasons).toHaveLength(1);
      expect(body.reasons![0]).toMatch(/^upstream: .*unreachable/);
      expect(body.checks.upstream!.status).toBe("failed");
      expect(body.checks.database!.status).toBe("ok");
    });

    it("is not ready, naming the migrations, when the database is ahead of the code", async () => {
      const { bridge } = pair();
      // A newer release, in another process, migrated the file under the running service.
      migrateBeyondCode(bridge.config.DATABASE_PATH);
      const { status, body } = await readyz(bridge);
      expect(status).toBe(503);
      expect(body.reasons).toEqual([expect.stringMatching(/^migrations: .*newer than this code/)]);
    });

    it("is not ready, naming the database, while another process holds the write lock", async () => {
      const { bridge } = pair();
      // The runner's claims would wait on the same lock for the whole busy timeout, stalling the test.
      await bridge.service.runner.stop();
      const other = holdWriteLock(bridge.config.DATABASE_PATH);
      try {
        const { status, body } = await readyz(bridge);
        expect(status).toBe(503);
        expect(body.reasons).toEqual([expect.stringMatching(/^database: not writable: database is locked/)]);
      } finally {
        other.release();
      }
      expect((await readyz(bridge)).status).toBe(200);
    });
  });

  it("is not ready, naming the migrations, when a migration is pending", async () => {
    // A service never runs behind its migrations (it applies them at start), so the check is
    // shown on a store whose file lacks the newest migration.
    const dir = mkdtempSync(join(tmpdir(), "lb-ready-"));
    const db = openDatabase(join(dir, "behind.db"));
    try {
      const known = readMigrations();
      migrate(db, known.slice(0, -1));
      const check = await checkMigrations(sqliteStore(db, { clock: systemClock }));
      expect(check).toMatchObject({ status: "failed", database_version: known.at(-2)!.id, code_version: known.at(-1)!.id });
      expect(check.detail).toMatch(/^pending migrations: /);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the upstream check", () => {
  async function listening<T extends Server>(server: T): Promise<{ url: string; close(): Promise<void> }> {
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    const { port } = server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}/api/v1`, close: () => new Promise<void>((ok) => server.close(() => ok())) };
  }

  it("counts any HTTP answer as reachable, and sends no credentials", async () => {
    const seen: IncomingHttpHeaders[] = [];
    const server = await listening(
      createHttpServer((req, res) => {
        seen.push(req.headers);
        res.writeHead(401, { "content-type": "application/json" }).end('{"error":"Unauthorized"}');
      }),
    );
    try {
      expect(await checkUpstream([server.url], 1_000)).toMatchObject({ status: "ok" });
      expect(seen).toHaveLength(1);
      expect(seen[0]!.authorization).toBeUndefined();
    } finally {
      await server.close();
    }
  });

  it("an upstream that accepts the connection but never answers is unreachable after the timeout", async () => {
    const sockets: Socket[] = [];
    const server = await listening(createTcpServer((socket) => void sockets.push(socket)));
    try {
      const started = Date.now();
      const result = await checkUpstream([server.url], 200);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(result.status).toBe("failed");
      expect(result.detail).toMatch(/unreachable \(timed out\)/);
    } finally {
      for (const s of sockets) s.destroy();
      await server.close();
    }
  });
});

describe("/readyz with the reseller, Manage2 and CLN", () => {
  const start = useProviderBridges();

  interface ProviderReadiness extends Readiness {
    degraded?: string[];
  }
  const readyzOf = async (bridge: TestBridge) => {
    const res = await fetch(`${bridge.url}/readyz`);
    return { status: res.status, body: (await res.json()) as ProviderReadiness };
  };

  it("is ready when each configured provider answers a read of its own: Manage2 its groups, CLN a check of a documentation IP", async () => {
    const { sbs, bridge } = await start();
    const { status, body } = await readyzOf(bridge);

    expect(status).toBe(200);
    expect(body.checks).toMatchObject({ upstream: { status: "ok" }, manage2: { status: "ok" }, cln: { status: "ok" } });
    expect(sbs.manage2.requests().map((r) => r.op)).toContain("XMLgroupInfo");
    expect(sbs.cln.requests().map((r) => r.op)).toContain("check");
  });

  it("is not ready, naming Manage2, when Manage2 cannot be reached; the other providers stay ok", async () => {
    const { sbs, bridge } = await start();
    await sbs.manage2Running.close();
    const { status, body } = await readyzOf(bridge);

    expect(status).toBe(503);
    expect(body.reasons).toEqual([expect.stringMatching(/^manage2: cPanel Manage2 .*unreachable/)]);
    expect(body.checks).toMatchObject({ manage2: { status: "failed" }, cln: { status: "ok" }, upstream: { status: "ok" } });
  });

  it("is not ready, naming CLN, when CLN answers only errors", async () => {
    const { sbs, bridge } = await start();
    sbs.cln.setFaults({ errorRate: 1 });
    const { status, body } = await readyzOf(bridge);

    expect(status).toBe(503);
    expect(body.reasons).toEqual([expect.stringMatching(/^cln: CloudLinux CLN /)]);
    expect(body.checks).toMatchObject({ cln: { status: "failed" }, manage2: { status: "ok" } });
  });

  it("stays ready but says so when a provider refuses the credentials, echoing none of them", async () => {
    const { bridge } = await start({ env: { MANAGE2_PASSWORD: "not-the-m2-password", CLN_SECRET_KEY: "not-the-cln-secret-key" } });
    const res = await fetch(`${bridge.url}/readyz`);
    const text = await res.text();
    const body = JSON.parse(text) as ProviderReadiness;

    expect(res.status).toBe(200);
    expect(body.degraded).toEqual([expect.stringMatching(/^manage2: cPanel Manage2 answered but refused/), expect.stringMatching(/^cln: CloudLinux CLN answered but refused/)]);
    expect(text).not.toContain("not-the-m2-password");
    expect(text).not.toContain("not-the-cln-secret-key");
  });

  it("with no reseller configured, checks only the providers it has", async () => {
    const { sbs, bridge } = await start({ withoutReseller: true });
    const { status, body } = await readyzOf(bridge);

    expect(status).toBe(200);
    expect(body.checks).toMatchObject({ upstream: { status: "ok", detail: expect.stringMatching(/no reseller is configured/) }, manage2: { status: "ok" }, cln: { status: "ok" } });
    expect(sbs.reseller.sandbox.requests()).toEqual([]);
  });
});
