import { describe, expect, it } from "vitest";
import { JOB_KINDS } from "../../src/vocabulary/job-kinds.js";
import { createdEvent, uniqueId, uniqueIp, type TestBridge } from "../helpers/bridge.js";
import { orderActive, untilIdle, usePairPerFile } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { operatorsFile } from "../helpers/operators.js";

/**
 * The three operator actions issue 26 added to the admin API, over HTTP against a real bridge
 * and sandbox: cancel a job, send the install mail again, reset the IP-change counter. Each is
 * an operator's (a viewer is refused 403, and the refusal is audited under the action), and each
 * writes its audit entry with the change.
 */

const TOKENS = { viewer: "viewer-token-ops-0123456789", operator: "operator-token-ops-0123456789" } as const;
const operatorsFilePath = operatorsFile([
  { name: "vera", role: "viewer", token: TOKENS.viewer },
  { name: "otto", role: "operator", token: TOKENS.operator },
]);

const as = (bridge: TestBridge, who: keyof typeof TOKENS, path: string, body?: unknown) =>
  bridge.admin(path, { method: "POST", headers: { authorization: `Bearer ${TOKENS[who]}` }, body: body === undefined ? undefined : JSON.stringify(body) });

interface Entry {
  actor: string;
  action: string;
  service_id: string | null;
  job_id: number | null;
  outcome: string;
  detail: string | null;
}
const audit = async (bridge: TestBridge, query: string) => ((await bridge.admin(`/admin/audit?${query}`)).body as { audit: Entry[] }).audit;

describe("the operator actions of issue 26 on the admin API", () => {
  const pair = usePairPerFile({ env: { OPERATORS_FILE: operatorsFilePath } });

  describe("POST /admin/jobs/:id/cancel", () => {
    it("a viewer is refused (403, audited), an operator cancels a blocked registration (200 with the job), and a second cancel is 409", async () => {
      const { sb, bridge } = pair();
      sb.sandbox.setBalance(0);
      const event = createdEvent();
      expect((await bridge.send(event)).status).toBe(202);
      const blocked = await waitFor(async () => (await bridge.service.queue.list({ state: "blocked", serviceId: event.service.id }))[0], 10_000, "the blocked registration");
      sb.sandbox.setBalance(1000);

      const refused = await as(bridge, "viewer", `/admin/jobs/${blocked.id}/cancel`);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ code: "forbidden", required_role: "operator", role: "viewer" });
      expect((await bridge.service.queue.get(blocked.id))?.state).toBe("blocked");

      const done = await as(bridge, "operator", `/admin/jobs/${blocked.id}/cancel`);
      expect(done.status).toBe(200);
      expect(done.body).toEqual({ job: expect.objectContaining({ id: blocked.id, kind: "register", service_id: event.service.id, state: "cancelled" }) });
      expect(((await bridge.admin(`/admin/jobs?state=cancelled&service_id=${event.service.id}`)).body.jobs as { id: number }[]).map((j) => j.id)).toEqual([blocked.id]);
      const history = (await bridge.admin(`/admin/services/${event.service.id}`)).body.history as { action: string; detail: string }[];
      expect(history).toContainEqual(expect.objectContaining({ action: "job cancelled", detail: expect.stringContaining("cancelled by otto") }));

      const again = await as(bridge, "operator", `/admin/jobs/${blocked.id}/cancel`);
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ code: "conflict", error: `job ${blocked.id} is cancelled; only failed or blocked jobs can be cancelled` });

      expect(await audit(bridge, `action=job.cancel`)).toEqual([
        expect.objectContaining({ actor: "otto", job_id: blocked.id, service_id: event.service.id, outcome: "refused" }),
        expect.objectContaining({ actor: "otto", job_id: blocked.id, service_id: event.service.id, outcome: "ok" }),
        expect.objectContaining({ actor: "vera", job_id: blocked.id, outcome: "refused", detail: expect.stringContaining("needs the operator role") }),
      ]);
    });

    it("a job that succeeded is 409, an unknown one 404, an id that is not one 422", async () => {
      const { bridge } = pair();
      const id = await orderActive(bridge);
      const [register] = await bridge.service.queue.list({ serviceId: id, kind: JOB_KINDS.register });
      expect((await as(bridge, "operator", `/admin/jobs/${register!.id}/cancel`)).body).toMatchObject({ code: "conflict", error: expect.stringContaining("is succeeded") });
      expect((await as(bridge, "operator", "/admin/jobs/987654321/cancel")).status).toBe(404);
      const bad = await as(bridge, "operator", "/admin/jobs/0x1/cancel");
      expect(bad.status).toBe(422);
      expect(bad.body).toMatchObject({ code: "validation", errors: { id: expect.any(Array) } });
    });
  });

  describe("POST /admin/services/:id/resend-install-mail", () => {
    it("a viewer is refused (403, audited); an operator queues a fresh mail (202), sent with its own Message-ID", async () => {
      const { bridge } = pair();
      const id = await orderActive(bridge);
      await untilIdle(bridge);
      const [first] = await bridge.service.store.consoleReads.mailsOf(id, 10);
      expect(first).toMatchObject({ state: "sent" });

      const refused = await as(bridge, "viewer", `/admin/services/${id}/resend-install-mail`);
      expect(refused.status).toBe(403);

      const queued = await as(bridge, "operator", `/admin/services/${id}/resend-install-mail`);
      expect(queued.status).toBe(202);
      expect(queued.body).toEqual({ job_id: expect.any(Number) });
      const jobId = queued.body.job_id as number;
      await waitFor(async () => (await bridge.service.queue.get(jobId))?.state === "succeeded", 10_000, "the resent mail's job");
      const mails = await bridge.service.store.consoleReads.mailsOf(id, 10);
      expect(mails.map((m) => m.state)).toEqual(["sent", "sent"]);
      expect(new Set(mails.map((m) => m.message_id)).size).toBe(2);
      expect(mails[0]).toMatchObject({ job_id: jobId, to_address: "ann@example.com" });

      expect(await audit(bridge, `service_id=${id}`)).toEqual([
        expect.objectContaining({ actor: "otto", action: "service.resend_install_mail", job_id: jobId, outcome: "ok" }),
        expect.objectContaining({ actor: "vera", action: "service.resend_install_mail", outcome: "refused" }),
      ]);
    });

    it("one request_id queues one mail however often it is sent; another request queues another", async () => {
      const { bridge } = pair();
      const id = await orderActive(bridge);
      const body = { request_id: uniqueId("req") };
      const once = await as(bridge, "operator", `/admin/services/${id}/resend-install-mail`, body);
      const twice = await as(bridge, "operator", `/admin/services/${id}/resend-install-mail`, body);
      expect(once.status).toBe(202);
      expect(twice.body).toEqual(once.body);
      const other = await as(bridge, "operator", `/admin/services/${id}/resend-install-mail`, { request_id: uniqueId("req") });
      expect(other.body.job_id).not.toBe(once.body.job_id);
      expect((await audit(bridge, `service_id=${id}&action=service.resend_install_mail`)).map((e) => e.job_id)).toEqual([other.body.job_id, once.body.job_id]);
    });

    it("refuses a licence that is not active or has no customer e-mail (422 with its code), an unknown service (404) and a wrong body (422, 415)", async () => {
      const { sb, bridge } = pair();
      sb.sandbox.setBalance(0);
      const pending = createdEvent();
      await bridge.send(pending);
      await waitFor(async () => (await bridge.service.queue.list({ state: "blocked", serviceId: pending.service.id }))[0], 10_000, "the blocked registration");
      sb.sandbox.setBalance(1000);
      const notActive = await as(bridge, "operator", `/admin/services/${pending.service.id}/resend-install-mail`);
      expect(notActive.status).toBe(422);
      expect(notActive.body).toMatchObject({ code: "service_not_active", error: expect.stringContaining("is pending") });

      // The provisioning API orders without an e-mail when the panel has none.
      const noMail = uniqueId("svc");
      const created = await bridge.provision("create", { service_identifier: noMail, package_identifier: "12", ip: uniqueIp(), billing_cycle: "monthly" });
      expect(created.status).toBe(200);
      const refused = await as(bridge, "operator", `/admin/services/${noMail}/resend-install-mail`);
      expect(refused.status).toBe(422);
      expect(refused.body).toMatchObject({ code: "no_customer_email" });
      expect(await audit(bridge, `service_id=${noMail}`)).toEqual([expect.objectContaining({ action: "service.resend_install_mail", outcome: "refused", detail: expect.stringContaining("no customer e-mail") })]);

      expect((await as(bridge, "operator", "/admin/services/no-such-service/resend-install-mail")).body).toMatchObject({ code: "unknown_service" });
      const badId = await as(bridge, "operator", `/admin/services/${noMail}/resend-install-mail`, { request_id: "x" });
      expect(badId.status).toBe(422);
      expect(badId.body).toMatchObject({ code: "validation", field: "request_id" });
      const text = await bridge.admin(`/admin/services/${noMail}/resend-install-mail`, { method: "POST", headers: { "content-type": "text/plain" }, body: "please" });
      expect(text.status).toBe(415);
    });
  });

  describe("POST /admin/services/:id/reset-ip-changes", () => {
    it("a viewer is refused (403, audited); an operator resets the counter (200 with the licence), with a history entry naming the operator", async () => {
      const { bridge } = pair();
      const id = await orderActive(bridge, { product_id: "13" });
      const moved = await as(bridge, "operator", `/admin/services/${id}/change-ip`, { ip: uniqueIp() });
      expect(moved.status).toBe(202);
      await untilIdle(bridge);
      expect((await bridge.service.services.get(id))?.ip_changes).toBe(1);

      const refused = await as(bridge, "viewer", `/admin/services/${id}/reset-ip-changes`);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ code: "forbidden", required_role: "operator" });
      expect((await bridge.service.services.get(id))?.ip_changes).toBe(1);

      const reset = await as(bridge, "operator", `/admin/services/${id}/reset-ip-changes`);
      expect(reset.status).toBe(200);
      expect(reset.body).toMatchObject({ service_id: id, ip_changes: 0, status: "active" });
      const view = await bridge.admin(`/admin/services/${id}`);
      expect(view.body.ip_changes).toBe(0);
      expect(view.body.history).toContainEqual(expect.objectContaining({ action: "IP changes reset", detail: "IP-change counter reset by otto (from 1 to 0)" }));

      expect((await audit(bridge, `service_id=${id}`)).filter((e) => e.action === "service.reset_ip_changes")).toEqual([
        expect.objectContaining({ actor: "otto", outcome: "ok" }),
        expect.objectContaining({ actor: "vera", outcome: "refused" }),
      ]);
      expect((await as(bridge, "operator", "/admin/services/no-such-service/reset-ip-changes")).status).toBe(404);
    });
  });
});
