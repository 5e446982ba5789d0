import { loadConfig } from "../../src/config/load.js";
import { describe, expect, it } from "vitest";
import { createdEvent, TEST_ADMIN_TOKEN, type TestBridge } from "../helpers/bridge.js";
import { untilIdle, usePair } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { operatorsFile, writeOperators, type TestOperator } from "../helpers/operators.js";
import { ConsoleClient } from "../console/client.js";
import type { Role } from "../../src/vocabulary/roles.js";

/**
 * Named operators, their roles and the audit trail (issue 26), over HTTP against a real bridge
 * and sandbox: each role against a read, an action on a job and an admin's action, and the
 * entries those calls leave, written with the change they record.
 */

const TOKENS = { viewer: "viewer-token-0123456789", operator: "operator-token-0123456789", alice: "alice-token-0123456789" } as const;
const operatorsFilePath = operatorsFile([
  { name: "vera", role: "viewer", token: TOKENS.viewer },
  { name: "otto", role: "operator", token: TOKENS.operator },
  { name: "alice", role: "admin", token: TOKENS.alice },
]);

type Who = keyof typeof TOKENS | "admin";
const tokenOf = (who: Who) => (who === "admin" ? TEST_ADMIN_TOKEN : TOKENS[who]);

async function call(bridge: TestBridge, who: Who, method: string, path: string, body?: unknown) {
  return bridge.admin(path, { method, headers: { authorization: `Bearer ${tokenOf(who)}` }, body: body === undefined ? undefined : JSON.stringify(body) });
}

interface AuditBody {
  audit: { id: number; at: string; actor: string; action: string; service_id: string | null; job_id: number | null; outcome: string; detail: string | null }[];
  next_cursor: string | null;
  total: number;
}
const auditOf = async (bridge: TestBridge, query = "") => (await bridge.admin(`/admin/audit${query}`)).body as unknown as AuditBody;

/** A service whose registration is blocked for lack of balance: a job an operator can retry. */
async function blockedJob(sb: { sandbox: { setBalance(n: number): void } }, bridge: TestBridge): Promise<{ id: number; serviceId: string }> {
  sb.sandbox.setBalance(0);
  const event = createdEvent();
  expect((await bridge.send(event)).status).toBe(202);
  const job = await waitFor(async () => (await bridge.service.queue.list({ state: "blocked", serviceId: event.service.id }))[0], 10_000, "the blocked registration");
  return { id: job.id, serviceId: event.service.id };
}

describe("operators and roles on the admin API", () => {
  const pair = usePair({ env: { OPERATORS_FILE: operatorsFilePath } });

  it("no token, or one nobody has: 401 on reads and actions alike, and nothing audited", async () => {
    const { bridge } = pair();
    for (const [method, path] of [["GET", "/admin/jobs"], ["POST", "/admin/jobs/1/retry"], ["GET", "/admin/audit"], ["GET", "/admin/forecast"]] as const) {
      const none = await fetch(`${bridge.url}${path}`, { method });
      expect(none.status, path).toBe(401);
      const wrong = await fetch(`${bridge.url}${path}`, { method, headers: { authorization: "Bearer not-a-token-0123456789" } });
      expect(wrong.status, path).toBe(401);
      expect(await wrong.json()).toMatchObject({ code: "unauthorized" });
    }
    expect((await auditOf(bridge)).total).toBe(0);
  });

  it("every role reads", async () => {
    const { bridge } = pair();
    for (const who of ["viewer", "operator", "alice", "admin"] as const) {
      for (const path of ["/admin/jobs", "/admin/licenses", "/admin/audit", "/admin/forecast"]) {
        expect((await call(bridge, who, "GET", path)).status, `${who} ${path}`).toBe(200);
      }
    }
  });

  it("a viewer may not retry a job (403, audited as refused, the job untouched); an operator may (202, audited with the job and its service)", async () => {
    const { sb, bridge } = pair();
    const job = await blockedJob(sb, bridge);

    const refused = await call(bridge, "viewer", "POST", `/admin/jobs/${job.id}/retry`);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: "forbidden", required_role: "operator", role: "viewer" });
    expect((await bridge.service.queue.get(job.id))!.state).toBe("blocked");

    sb.sandbox.setBalance(1000);
    const done = await call(bridge, "operator", "POST", `/admin/jobs/${job.id}/retry`);
    expect(done.status).toBe(202);
    await untilIdle(bridge);
    expect((await bridge.service.services.get(job.serviceId))!.status).toBe("active");

    const { audit, total } = await auditOf(bridge);
    expect(total).toBe(2);
    // Newest first.
    expect(audit).toEqual([
      expect.objectContaining({ actor: "otto", action: "job.retry", service_id: job.serviceId, job_id: job.id, outcome: "ok" }),
      expect.objectContaining({ actor: "vera", action: "job.retry", service_id: null, job_id: job.id, outcome: "refused", detail: expect.stringContaining("needs the operator role") }),
    ]);
    expect(Date.parse(audit[0]!.at)).toBeGreaterThan(0);
  });

  it("a retry the job's state refuses is answered 409 and audited as refused", async () => {
    const { bridge } = pair();
    const id = (await bridge.send(createdEvent())).body.event_id;
    expect(id).toBeDefined();
    await untilIdle(bridge);
    const [succeeded] = await bridge.service.queue.list({ state: "succeeded" });
    const res = await call(bridge, "operator", "POST", `/admin/jobs/${succeeded!.id}/retry`);
    expect(res.status).toBe(409);
    expect((await auditOf(bridge)).audit).toEqual([
      expect.objectContaining({ actor: "otto", action: "job.retry", job_id: succeeded!.id, service_id: succeeded!.serviceId, outcome: "refused", detail: expect.stringContaining("succeeded") }),
    ]);
  });

  it("reconcile: looking is an operator's, repairing an admin's; ADMIN_TOKEN is the admin named admin", async () => {
    const { bridge } = pair();
    expect((await call(bridge, "viewer", "POST", "/admin/reconcile", {})).status).toBe(403);
    expect((await call(bridge, "operator", "POST", "/admin/reconcile", {})).status).toBe(200);
    const refused = await call(bridge, "operator", "POST", "/admin/reconcile", { fix: true });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: "forbidden", required_role: "admin", role: "operator" });
    expect((await call(bridge, "alice", "POST", "/admin/reconcile", { fix: true })).status).toBe(200);
    expect((await call(bridge, "admin", "POST", "/admin/reconcile", { fix: true })).status).toBe(200);

    const { audit } = await auditOf(bridge);
    // A look changes nothing and is not in the trail; the refused and the made repairs are.
    expect(audit.map((e) => [e.actor, e.action, e.outcome])).toEqual([
      ["admin", "reconcile.fix", "ok"],
      ["alice", "reconcile.fix", "ok"],
      ["otto", "reconcile.fix", "refused"],
      ["vera", "reconcile.fix", "refused"],
    ]);
  });

  it("admin-only routes refuse an operator, whatever the route's own answer would be", async () => {
    const { bridge } = pair();
    for (const path of ["/admin/adopt", "/admin/reseller/7/credit", "/admin/sub-resellers/3/credit"]) {
      const res = await call(bridge, "operator", "POST", path, {});
      expect(res.status, path).toBe(403);
      expect(res.body).toMatchObject({ code: "forbidden", required_role: "admin" });
    }
  });
});

describe("OPERATORS_FILE on reload", () => {
  const file = operatorsFile([{ name: "vera", role: "viewer", token: TOKENS.viewer }]);
  const pair = usePair({ env: { OPERATORS_FILE: file } });

  it("a reloaded file lets a new operator in, changes a role, and shuts out one it dropped", async () => {
    const { bridge } = pair();
    expect((await call(bridge, "operator", "GET", "/admin/jobs")).status).toBe(401);
    writeOperators(file, [{ name: "otto", role: "operator", token: TOKENS.operator }]);
    bridge.service.reload(loadConfig({ env: bridge.env, cwd: process.cwd() }));
    expect((await call(bridge, "operator", "GET", "/admin/jobs")).status).toBe(200);
    expect((await call(bridge, "viewer", "GET", "/admin/jobs")).status).toBe(401);
    expect((await call(bridge, "operator", "POST", "/admin/reconcile", {})).status).toBe(200);
  });
});

describe("console sessions on reload", () => {
  const entry = (name: string, role: Role, token: string): TestOperator => ({ name, role, token });
  const OLGA_TOKEN = "olga-token-0123456789";
  const file = operatorsFile([entry("vera", "viewer", TOKENS.viewer), entry("otto", "operator", TOKENS.operator), entry("alice", "admin", TOKENS.alice), entry("olga", "operator", OLGA_TOKEN)]);
  const pair = usePair({ env: { OPERATORS_FILE: file } });

  it("a reload ends the sessions of an operator it removed, demoted or gave a new token, and keeps an unchanged one's", async () => {
    const { bridge } = pair();
    const login = async (token: string) => {
      const client = new ConsoleClient(bridge.url);
      expect((await client.login(token)).status).toBe(303);
      expect((await client.get("/console")).status).toBe(200);
      return client;
    };
    const [vera, otto, alice, olga] = [await login(TOKENS.viewer), await login(TOKENS.operator), await login(TOKENS.alice), await login(OLGA_TOKEN)];
    const ottoSecondToken = "otto-second-token-0123456789";
    // vera dropped, otto's token rotated, alice demoted to operator.
    writeOperators(file, [entry("otto", "operator", ottoSecondToken), entry("alice", "operator", TOKENS.alice), entry("olga", "operator", OLGA_TOKEN)]);
    bridge.service.reload(loadConfig({ env: bridge.env, cwd: process.cwd() }));
    for (const client of [vera, otto, alice]) {
      await waitFor(async () => (await client.get("/console")).status === 303, 5_000, "the session to end");
      expect((await client.get("/console")).res.headers.get("location")).toBe("/console/login");
    }
    // The new token logs otto in; alice logs in again with her new role.
    await login(ottoSecondToken);
    const demoted = await login(TOKENS.alice);
    expect((await demoted.get("/console/reconcile")).text).not.toContain('name="fix" value="true"');
    // olga, unchanged, was never logged out.
    expect((await olga.get("/console")).status).toBe(200);
  });
});

describe("GET /admin/audit", () => {
  const pair = usePair({ env: { OPERATORS_FILE: operatorsFilePath } });

  it("pages newest first with next_cursor and total, filters by actor and service, and names a bad field", async () => {
    const { bridge } = pair();
    const a = await blockedJob(pair().sb, bridge);
    // Five refused retries by two people, on one job: a trail to page through.
    for (const who of ["viewer", "operator", "viewer", "operator", "viewer"] as const) {
      await call(bridge, who, "POST", `/admin/jobs/${a.id + 1000}/retry`);
    }
    const first = await auditOf(bridge, "?limit=2");
    expect(first.total).toBe(5);
    expect(first.audit).toHaveLength(2);
    const second = await auditOf(bridge, `?limit=2&cursor=${first.next_cursor}`);
    const third = await auditOf(bridge, `?limit=2&cursor=${second.next_cursor}`);
    expect(third.next_cursor).toBeNull();
    const ids = [...first.audit, ...second.audit, ...third.audit].map((e) => e.id);
    expect(ids).toHaveLength(5);
    expect([...ids].sort((x, y) => y - x)).toEqual(ids);

    expect((await auditOf(bridge, "?actor=vera")).total).toBe(3);
    expect((await auditOf(bridge, "?actor=otto&limit=1")).audit).toEqual([expect.objectContaining({ actor: "otto", outcome: "refused" })]);
    expect((await auditOf(bridge, `?service_id=${a.serviceId}`)).total).toBe(0);

    for (const [query, field] of [["?limit=0", "limit"], ["?limit=1001", "limit"], ["?limit=ten", "limit"], ["?cursor=abc", "cursor"], ["?colour=red", "colour"]] as const) {
      const res = await bridge.admin(`/admin/audit${query}`);
      expect(res.status, query).toBe(422);
      expect(res.body, query).toMatchObject({ code: "validation", field, errors: { [field]: expect.any(Array) } });
    }
  });
});

describe("an operator's action on a licence, audited with its event", () => {
  const pair = usePair({ env: { OPERATORS_FILE: operatorsFilePath } });

  it("suspend by otto: 202, and one entry naming otto, the service and the job the event queued; a viewer's try is refused and audited", async () => {
    const { bridge } = pair();
    const event = createdEvent();
    expect((await bridge.send(event)).status).toBe(202);
    await waitFor(async () => (await bridge.service.services.get(event.service.id))?.status === "active", 10_000, "the licence active");
    const id = event.service.id;

    const refused = await call(bridge, "viewer", "POST", `/admin/services/${id}/suspend`);
    expect(refused.status).toBe(403);

    const done = await call(bridge, "operator", "POST", `/admin/services/${id}/suspend`);
    expect(done.status).toBe(202);
    const jobId = (done.body as { job_id: number | null }).job_id;
    expect(jobId).toEqual(expect.any(Number));
    await untilIdle(bridge);
    expect((await bridge.service.services.get(id))?.status).toBe("suspended");

    const entries = (await auditOf(bridge, `?service_id=${id}`)).audit;
    expect(entries.filter((e) => e.actor === "otto")).toEqual([expect.objectContaining({ action: "service.suspend", service_id: id, job_id: jobId, outcome: "ok" })]);
    expect(entries.filter((e) => e.actor === "vera")).toEqual([expect.objectContaining({ service_id: id, outcome: "refused" })]);
  });
});
