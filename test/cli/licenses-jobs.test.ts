import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/main.js";
import { createdEvent } from "../helpers/bridge.js";
import { orderActive, usePairPerFile, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { runCli } from "./helpers.js";

/**
 * One running bridge and the CLI, both in this process, on the same database:
 * an active licence, and a registration blocked because the reseller balance ran out.
 */
describe("licenses and jobs commands", () => {
  let env: Record<string, string>;
  let active: string;
  let blocked: string;
  let blockedJob: number;

  const pair = usePairPerFile({
    async setup({ sb, bridge }) {
      env = bridge.env;
      active = await orderActive(bridge, { product_id: "12", ip: "203.0.113.10" });
      sb.sandbox.setBalance(0);
      const event = createdEvent({ product_id: "17", ip: "203.0.113.11" });
      blocked = event.service.id;
      await bridge.send(event);
      const job = await waitFor(async () => (await bridge.service.queue.list({ state: "blocked", serviceId: blocked }))[0], 10_000, "the registration to block");
      blockedJob = job.id;
      // Let the stopped job's bookkeeping (last_error, history) land before comparing outputs.
      await waitFor(async () => (await bridge.service.services.get(blocked))?.last_error);
    },
  });

  it("licenses list --json prints what GET /admin/licenses answers", async () => {
    const { bridge } = pair();
    const run = await runCli(["licenses", "list", "--json"], env);
    expect(run.code).toBe(0);
    const api = await bridge.admin("/admin/licenses");
    expect(run.json()).toEqual(api.body);
    expect(run.json<{ licenses: { service_id: string; status: string }[] }>().licenses.map((l) => [l.service_id, l.status]).sort()).toEqual(
      [[active, "active"], [blocked, "pending"]].sort(),
    );
  });

  it("licenses list prints a table for people", async () => {
    const run = await runCli(["licenses", "list", "--status", "active"], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^SERVICE_ID\s+TYPE\s+VARIANT\s+IP\s+STATUS/);
    // Everywhere a licence shows, its provider shows (service-contract.md section 12).
    expect(run.stdout).toMatch(/^SERVICE_ID\s+TYPE\s+VARIANT\s+IP\s+STATUS\s+PROVIDER\s+EXPIRES_AT/);
    expect(run.stdout).toMatch(new RegExp(`^${active}\\s.*\\sactive\\s+reseller\\s`, "m"));
    expect(run.stdout).toContain(active);
    expect(run.stdout).not.toContain(blocked);
  });

  it("licenses list --status with a status that does not exist is a usage error naming the allowed ones", async () => {
    const run = await runCli(["licenses", "list", "--status", "sleeping"], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--status");
    expect(run.stderr).toContain("pending, active, suspended, terminated, failed");
  });

  it("licenses list --provider prints one provider's licences, as GET /admin/licenses?provider= does", async () => {
    const { bridge } = pair();
    for (const provider of ["reseller", "manage2"]) {
      const run = await runCli(["licenses", "list", "--provider", provider, "--json"], env);
      expect(run.code, run.stderr).toBe(0);
      expect(run.json()).toEqual((await bridge.admin(`/admin/licenses?provider=${provider}`)).body);
    }
    const reseller = await runCli(["licenses", "list", "--provider", "reseller", "--status", "active", "--json"], env);
    expect(reseller.json<{ licenses: { service_id: string; provider: string }[] }>().licenses).toEqual([expect.objectContaining({ service_id: active, provider: "reseller" })]);
    const none = await runCli(["licenses", "list", "--provider", "cln", "--json"], env);
    expect(none.json()).toEqual({ licenses: [], next_cursor: null, total: 0 });
  });

  it("licenses list --provider with a provider that does not exist is a usage error naming the allowed ones", async () => {
    const run = await runCli(["licenses", "list", "--provider", "cpanel"], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--provider");
    expect(run.stderr).toContain("reseller, manage2, cln");
  });

  it("licenses list --limit 1 pages, --cursor goes on, as GET /admin/licenses?limit=1 does", async () => {
    const { bridge } = pair();
    const first = await runCli(["licenses", "list", "--limit", "1", "--json"], env);
    expect(first.code).toBe(0);
    const page = first.json<{ licenses: { service_id: string }[]; next_cursor: string; total: number }>();
    expect(page).toEqual((await bridge.admin("/admin/licenses?limit=1")).body);
    expect(page).toMatchObject({ total: 2, next_cursor: expect.any(String) });
    const second = await runCli(["licenses", "list", "--limit", "1", "--cursor", page.next_cursor, "--json"], env);
    expect(second.code).toBe(0);
    expect(second.json()).toEqual((await bridge.admin(`/admin/licenses?limit=1&cursor=${page.next_cursor}`)).body);
    expect(second.json<{ next_cursor: null }>().next_cursor).toBeNull();
  });

  it("licenses list --all --json walks every page into one page object", async () => {
    const { bridge } = pair();
    const run = await runCli(["licenses", "list", "--all", "--limit", "1", "--json"], env);
    expect(run.code).toBe(0);
    const api = (await bridge.admin("/admin/licenses")).body;
    expect(run.json()).toEqual(api);
  });

  it("jobs list --all prints every page's table and the count", async () => {
    const { bridge } = pair();
    const run = await runCli(["jobs", "list", "--all", "--limit", "1"], env);
    expect(run.code).toBe(0);
    const total = (await bridge.admin("/admin/jobs")).body.total as number;
    expect(run.stdout.match(/^ID\s+KIND/gm)).toHaveLength(total);
    expect(run.stdout.trim().split("\n").at(-1)).toBe(`${total} job(s)`);
  });

  it.each([
    [["licenses", "list", "--limit", "0"], "--limit"],
    [["licenses", "list", "--limit", "1001"], "--limit"],
    [["jobs", "list", "--limit", "ten"], "--limit"],
    [["jobs", "list", "--cursor", "not-a-cursor"], "--cursor"],
  ])("%j is a usage error naming %s", async (args, option) => {
    const run = await runCli(args, env);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split("\n")).toEqual([expect.stringContaining(option)]);
  });

  it("licenses list --q longer than the API takes (256 characters) is a usage error with the API's rule, and lists nothing", async () => {
    const q = "x".repeat(257);
    const { bridge } = pair();
    expect((await bridge.admin(`/admin/licenses?q=${q}`)).status).toBe(422);
    const run = await runCli(["licenses", "list", "--q", q], env);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr.trim().split("\n")).toEqual(["license-bridge: --q must be at most 256 characters (this one has 257)"]);
    expect((await runCli(["licenses", "list", "--q", "x".repeat(256)], env)).code).toBe(0);
  });

  it("jobs list --service-id and --kind take what GET /admin/jobs takes, and refuse the rest with a usage error", async () => {
    for (const option of ["--service-id", "--kind"]) {
      const run = await runCli(["jobs", "list", option, "y".repeat(65)], env);
      expect(run.code, option).toBe(2);
      expect(run.stderr.trim().split("\n"), option).toEqual([expect.stringMatching(new RegExp(`^license-bridge: ${option} must be at most 64 characters`))]);
    }
  });

  it("licenses show --json prints the licence with its history, as GET /admin/services/:id", async () => {
    const { bridge } = pair();
    const run = await runCli(["licenses", "show", active, "--json"], env);
    expect(run.code).toBe(0);
    expect(run.json()).toEqual((await bridge.admin(`/admin/services/${active}`)).body);
    expect(run.json<{ history: { action: string }[] }>().history.map((h) => h.action)).toContain("registered");
  });

  it("licenses show of a service the bridge does not know fails with one line", async () => {
    const run = await runCli(["licenses", "show", "no-such-service"], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr.trim().split("\n")).toEqual([expect.stringContaining('unknown service "no-such-service"')]);
  });

  it("jobs list --state blocked --json lists the blocked registration, as GET /admin/jobs", async () => {
    const { bridge } = pair();
    const run = await runCli(["jobs", "list", "--state", "blocked", "--service-id", blocked, "--json"], env);
    expect(run.code).toBe(0);
    expect(run.json()).toEqual((await bridge.admin(`/admin/jobs?state=blocked&service_id=${blocked}`)).body);
    expect(run.json<{ jobs: { id: number; kind: string }[] }>().jobs).toEqual([expect.objectContaining({ id: blockedJob, kind: "register" })]);
  });

  it("takes --json before the command too (license-bridge --json jobs list ...)", async () => {
    const { bridge } = pair();
    const run = await runCli(["--json", "jobs", "list", "--state", "blocked", "--service-id", blocked], env);
    expect(run.code).toBe(0);
    expect(run.json()).toEqual((await bridge.admin(`/admin/jobs?state=blocked&service_id=${blocked}`)).body);
  });

  it("jobs list --state with a state that does not exist is a usage error naming the allowed ones", async () => {
    const run = await runCli(["jobs", "list", "--state", "stuck"], env);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--state");
    expect(run.stderr).toContain("queued, running, succeeded, failed, blocked, cancelled");
  });

  it("jobs retry of a job that does not exist fails with exit code 1", async () => {
    const run = await runCli(["jobs", "retry", "987654"], env);
    expect(run.code).toBe(1);
    expect(run.stderr.trim()).toBe("license-bridge: unknown job 987654 (see `license-bridge jobs list`)");
  });

  it("jobs retry with an id that is not plain decimal digits (0x.., 1e..) is a usage error naming the id, and retries nothing", async () => {
    const { bridge } = pair();
    for (const id of [`0x${blockedJob.toString(16)}`, `${blockedJob}e0`, `${blockedJob}.0`, `0${blockedJob}`]) {
      const run = await runCli(["jobs", "retry", id], env);
      expect(run.code, id).toBe(2);
      expect(run.stderr.trim().split("\n")).toEqual([`license-bridge: id must be a job id in plain decimal digits (e.g. 42), got "${id}"`]);
    }
    expect((await bridge.service.queue.get(blockedJob))?.state).toBe("blocked");
  });

  it("jobs retry of the blocked registration, once the balance is back, ends with the licence active", async () => {
    const { sb, bridge } = pair();
    sb.sandbox.setBalance(1000);
    const run = await runCli(["jobs", "retry", String(blockedJob), "--json"], env);
    expect(run.code).toBe(0);
    expect(run.json()).toEqual({ job: expect.objectContaining({ id: blockedJob, state: "queued", attempts: 0 }) });
    await waitStatus(bridge, blocked, "active");
    expect(sb.sandbox.licenses().some((l) => l.ip === "203.0.113.11" && l.type === "cloudlinux")).toBe(true);
  });

  it("ends with exit code 78 and the problem named when the configuration is broken", async () => {
    const run = await runCli(["licenses", "list"], { ...env, RESELLER_PROTOCOL: "v3" });
    expect(run.code).toBe(78);
    expect(run.stderr).toContain("RESELLER_PROTOCOL");
  });

  it("--help exits 0 on every level of every command", async () => {
    const paths: string[][] = [];
    const walk = (cmd: Command, path: string[]) => {
      paths.push(path);
      for (const sub of cmd.commands) walk(sub, [...path, sub.name()]);
    };
    walk(await buildProgram(), []);
    expect(paths).toEqual(expect.arrayContaining([["licenses", "list"], ["licenses", "show"], ["jobs", "list"], ["jobs", "retry"], ["reconcile"]]));
    for (const path of paths) {
      expect({ path, code: (await runCli([...path, "--help"], env)).code }).toEqual({ path, code: 0 });
    }
  });
});
