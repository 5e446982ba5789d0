import { createHash } from "node:crypto";
import { userInfo } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createdEvent, startTestBridge, startTestSandbox, type TestBridge, type TestSandbox } from "../helpers/bridge.js";
import { waitFor } from "../helpers/wait.js";
import { operatorsFile } from "../helpers/operators.js";
import { runCli } from "./helpers.js";
import { DEFAULT_SANDBOX_TOKENS, MAIN_RESELLER_ID } from "../../src/vocabulary/sandbox-identity.js";

/**
 * The audit trail from the command line (issue 26): the CLI's changes are audited like the
 * API's (as cli:<OS user>, or --as an operator whose role then applies), and `audit` and
 * `forecast` read what GET /admin/audit and /admin/forecast answer.
 */

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const operatorsFilePath = operatorsFile([{ name: "vera", role: "viewer", token: "viewer-token-0123456789" }]);

interface AuditJson {
  audit: { actor: string; action: string; service_id: string | null; job_id: number | null; outcome: string; detail: string | null }[];
  next_cursor: string | null;
  total: number;
}

describe("the audit trail from the CLI", () => {
  let sb: TestSandbox;
  let bridge: TestBridge;
  let env: Record<string, string>;
  let job: { id: number; serviceId: string };

  beforeAll(async () => {
    sb = await startTestSandbox({ balance: 0 });
    bridge = await startTestBridge(sb, { env: { OPERATORS_FILE: operatorsFilePath } });
    env = bridge.env;
    const event = createdEvent();
    expect((await bridge.send(event)).status).toBe(202);
    const blocked = await waitFor(async () => (await bridge.service.queue.list({ state: "blocked", serviceId: event.service.id }))[0], 10_000, "the blocked registration");
    job = { id: blocked.id, serviceId: event.service.id };
  });

  afterAll(async () => {
    await bridge?.close();
    await sb?.close();
  });

  it("--as a viewer may not retry a job: exit 1 with one line, the refusal audited, the job untouched", async () => {
    const run = await runCli(["--as", "vera", "jobs", "retry", String(job.id)], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^license-bridge: forbidden: job\.retry needs the operator role/);
    expect((await bridge.service.queue.get(job.id))!.state).toBe("blocked");
    const { entries } = await bridge.service.store.audit.list({ actor: "vera" });
    expect(entries).toEqual([expect.objectContaining({ action: "job.retry", job_id: job.id, service_id: job.serviceId, outcome: "refused" })]);
  });

  it("--as a name nobody has is a usage error", async () => {
    const run = await runCli(["--as", "mallory", "jobs", "retry", String(job.id)], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('no operator of that name in OPERATORS_FILE');
  });

  it("a retry by the OS user is written with the job, as cli:<user>, and `audit` lists it", async () => {
    sb.sandbox.setBalance(1000);
    const run = await runCli(["jobs", "retry", String(job.id), "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    await waitFor(async () => (await bridge.service.services.get(job.serviceId))?.status === "active", 10_000, "the registration");

    const me = `cli:${userInfo().username}`;
    const listed = await runCli(["audit", "--actor", me, "--json"], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.json<AuditJson>()).toEqual({
      audit: [expect.objectContaining({ actor: me, action: "job.retry", job_id: job.id, service_id: job.serviceId, outcome: "ok", detail: expect.stringContaining("via the CLI") })],
      next_cursor: null,
      total: 1,
    });
    const all = (await runCli(["audit", "--service", job.serviceId, "--limit", "1", "--all", "--json"], env)).json<AuditJson>();
    expect(all.audit.map((e) => e.actor)).toEqual([me, "vera"]);
  });

  it("the reseller's money is an admin's: a viewer's credit is refused and audited, the OS user's is made and audited", async () => {
    const admin = { ...env, RESELLER_ADMIN_TOKEN: DEFAULT_SANDBOX_TOKENS.admin };
    const before = sb.sandbox.balance();
    const refused = await runCli(["--as", "vera", "reseller", "credit", String(MAIN_RESELLER_ID), "50", "--description", "top-up"], admin);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/forbidden: reseller\.credit needs the admin role/);
    expect(sb.sandbox.balance()).toBe(before);

    const made = await runCli(["reseller", "credit", String(MAIN_RESELLER_ID), "50", "--description", "top-up"], admin);
    expect(made.code, made.stderr).toBe(0);
    expect(sb.sandbox.balance()).toBe(before + 50);
    const { entries } = await bridge.service.store.audit.list({ action: "reseller.credit" });
    expect(entries.map((e) => [e.actor, e.outcome])).toEqual([
      [`cli:${userInfo().username}`, "ok"],
      ["vera", "refused"],
    ]);
    expect(entries[0]!.detail).toContain(`credit 50 to reseller ${MAIN_RESELLER_ID}`);
  });

  it("operators new prints a token once and the entry that holds only its hash", async () => {
    const run = await runCli(["operators", "new", "alice", "--role", "operator", "--json"], {});
    expect(run.code, run.stderr).toBe(0);
    const { token, entry } = run.json<{ token: string; entry: Record<string, string> }>();
    expect(entry).toEqual({ name: "alice", role: "operator", token_sha256: sha256(token) });
    expect((await runCli(["operators", "new", "no spaces", "--role", "viewer"], {})).code).toBe(2);
  });

  it("operators hash reads a token on standard input and prints its SHA-256; a short one is a usage error", async () => {
    const run = await runCli(["operators", "hash", "--json"], {}, { stdin: "viewer-token-0123456789\n" });
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toEqual({ token_sha256: sha256("viewer-token-0123456789") });
    const short = await runCli(["operators", "hash"], {}, { stdin: "too-short" });
    expect(short.code).toBe(2);
    expect(short.stderr).toContain("a token of 16 or more characters is expected on standard input");
  });

  it("a bad --limit or --cursor is a usage error naming the option", async () => {
    const limit = await runCli(["audit", "--limit", "0"], env);
    expect(limit.code).toBe(2);
    expect(limit.stderr).toMatch(/--limit must be a whole number from 1 to 1000/);
    const cursor = await runCli(["audit", "--cursor", "x"], env);
    expect(cursor.code).toBe(2);
    expect(cursor.stderr).toMatch(/--cursor /);
  });

  it("forecast answers as the API does; against a live reseller its prices are the catalogue's", async () => {
    const run = await runCli(["forecast", "--days", "40", "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    const api = (await bridge.admin("/admin/forecast?days=40")).body;
    expect(run.json()).toEqual({ ...api, balance: null });
    expect(api).toMatchObject({ days: 40, due: [], total_cost: 0, unpriced_products: [], prices: "catalogue" });
    const bad = await runCli(["forecast", "--days", "367"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--days must be a whole number of days from 1 to 366/);
  });
});
