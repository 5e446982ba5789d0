import { userInfo } from "node:os";
import { describe, expect, it } from "vitest";
import { createdEvent } from "../helpers/bridge.js";
import { orderActive, usePairPerFile } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { operatorsFile } from "../helpers/operators.js";
import { runCli } from "./helpers.js";

/**
 * The operator actions of issue 26 from the command line (run in this process, on the running
 * bridge's database): `jobs cancel`, `licenses resend-mail`, `licenses reset-ip-changes`, each
 * audited as cli:<OS user>, or refused for a viewer named with --as.
 */

const operatorsFilePath = operatorsFile([{ name: "vera", role: "viewer", token: "viewer-token-cli-0123456789" }]);
const me = `cli:${userInfo().username}`;

describe("jobs cancel, licenses resend-mail and licenses reset-ip-changes", () => {
  let env: Record<string, string>;
  let active: string;
  let pending: string;
  let blockedJob: number;

  const pair = usePairPerFile({
    env: { OPERATORS_FILE: operatorsFilePath },
    async setup({ sb, bridge }) {
      env = bridge.env;
      active = await orderActive(bridge, { product_id: "13" });
      sb.sandbox.setBalance(0);
      const event = createdEvent({ product_id: "17" });
      pending = event.service.id;
      await bridge.send(event);
      blockedJob = (await waitFor(async () => (await bridge.service.queue.list({ state: "blocked", serviceId: pending }))[0], 10_000, "the registration to block")).id;
      sb.sandbox.setBalance(1000);
    },
  });

  it("--as a viewer may cancel nothing: exit 1 with one line, the refusal audited, the job untouched", async () => {
    const { bridge } = pair();
    const run = await runCli(["--as", "vera", "jobs", "cancel", String(blockedJob)], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^license-bridge: forbidden: job\.cancel needs the operator role/);
    expect((await bridge.service.queue.get(blockedJob))?.state).toBe("blocked");
    expect((await bridge.service.store.audit.list({ actor: "vera", action: "job.cancel" })).entries).toEqual([
      expect.objectContaining({ job_id: blockedJob, service_id: pending, outcome: "refused" }),
    ]);
  });

  it("jobs cancel --json cancels the blocked registration, audited as cli:<user>; a second cancel fails saying why", async () => {
    const { bridge } = pair();
    const run = await runCli(["jobs", "cancel", String(blockedJob), "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json()).toEqual({ job: expect.objectContaining({ id: blockedJob, kind: "register", state: "cancelled" }) });
    expect((await bridge.service.store.audit.list({ actor: me, action: "job.cancel" })).entries).toEqual([
      expect.objectContaining({ job_id: blockedJob, service_id: pending, outcome: "ok", detail: expect.stringContaining("via the CLI") }),
    ]);

    const again = await runCli(["jobs", "cancel", String(blockedJob)], env);
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toBe(`license-bridge: job ${blockedJob} is cancelled; only failed or blocked jobs can be cancelled`);
  });

  it("jobs cancel of an unknown job fails (1); an id that is not one is a usage error (2)", async () => {
    const unknown = await runCli(["jobs", "cancel", "987654"], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe("license-bridge: unknown job 987654 (see `license-bridge jobs list`)");
    const bad = await runCli(["jobs", "cancel", "1e3"], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("plain decimal digits");
  });

  it("licenses resend-mail --json queues a fresh install mail that the running service sends", async () => {
    const { bridge } = pair();
    const run = await runCli(["licenses", "resend-mail", active, "--json"], env);
    expect(run.code, run.stderr).toBe(0);
    const { job_id: jobId } = run.json<{ job_id: number }>();
    await waitFor(async () => (await bridge.service.queue.get(jobId))?.state === "succeeded", 10_000, "the resent mail");
    expect((await bridge.service.store.consoleReads.mailsOf(active, 10)).map((m) => [m.job_id === jobId, m.state])).toEqual([
      [true, "sent"],
      [false, "sent"],
    ]);
    expect((await bridge.service.store.audit.list({ actor: me, action: "service.resend_install_mail" })).entries).toEqual([
      expect.objectContaining({ service_id: active, job_id: jobId, outcome: "ok" }),
    ]);
  });

  it("licenses resend-mail of a licence not active, or of an unknown service, fails with one line", async () => {
    const notActive = await runCli(["licenses", "resend-mail", pending], env);
    expect(notActive.code).toBe(1);
    expect(notActive.stderr.trim()).toBe(`license-bridge: service ${pending} is pending: the install mail is sent again only for an active licence`);
    const unknown = await runCli(["licenses", "resend-mail", "no-such-service"], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown service "no-such-service"');
  });

  it("licenses reset-ip-changes sets the counter to 0 (--as a viewer may not)", async () => {
    const { bridge } = pair();
    await bridge.service.services.change({ serviceId: active, patch: { ip_changes: 3 } });
    const refused = await runCli(["--as", "vera", "licenses", "reset-ip-changes", active], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("forbidden: service.reset_ip_changes needs the operator role");
    expect((await bridge.service.services.get(active))?.ip_changes).toBe(3);

    const human = await runCli(["licenses", "reset-ip-changes", active], env);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout.trim()).toBe(`the IP-change counter of service ${active} is 0 again`);
    await bridge.service.services.change({ serviceId: active, patch: { ip_changes: 1 } });
    const json = await runCli(["licenses", "reset-ip-changes", active, "--json"], env);
    expect(json.json()).toMatchObject({ service_id: active, ip_changes: 0 });
    expect((await bridge.admin(`/admin/services/${active}`)).body.history).toContainEqual(
      expect.objectContaining({ action: "IP changes reset", detail: `IP-change counter reset by ${me} (from 1 to 0)` }),
    );
    const unknown = await runCli(["licenses", "reset-ip-changes", "no-such-service"], env);
    expect(unknown.code).toBe(1);
  });

  it("a 6,000-character service id is a usage error naming it, whoever asks, and nothing is audited", async () => {
    const { bridge } = pair();
    const before = (await bridge.service.store.audit.list()).total;
    for (const args of [["licenses", "resend-mail"], ["licenses", "reset-ip-changes"], ["--as", "vera", "licenses", "resend-mail"], ["--as", "vera", "licenses", "reset-ip-changes"]]) {
      const run = await runCli([...args, "x".repeat(6000)], env);
      expect(run.code, args.join(" ")).toBe(2);
      expect(run.stderr.trim().split("\n"), args.join(" ")).toEqual(["license-bridge: service-id must be at most 64 characters (this one has 6000)"]);
    }
    expect((await bridge.service.store.audit.list()).total).toBe(before);
  });

  it("--as a viewer's refusal on an id the bridge does not know names no service: a token pasted there never reaches the trail", async () => {
    const { bridge } = pair();
    const pasted = "viewer-token-cli-0123456789";
    for (const action of ["resend-mail", "reset-ip-changes"]) {
      const run = await runCli(["--as", "vera", "licenses", action, pasted], env);
      expect(run.code, action).toBe(1);
    }
    // Newest first: this test's two refusals.
    const entries = (await bridge.service.store.audit.list({ actor: "vera" })).entries.slice(0, 2);
    expect(entries.map((e) => [e.action, e.outcome])).toEqual([["service.reset_ip_changes", "refused"], ["service.resend_install_mail", "refused"]]);
    expect(entries.map((e) => e.service_id)).toEqual([null, null]);
    expect(JSON.stringify(entries)).not.toContain(pasted);
  });
});
