import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createdEvent, startTestBridge, startTestSandbox, TEST_ADMIN_TOKEN, TEST_PROVISIONING_TOKEN, TEST_SECRET, type TestBridge, type TestSandbox } from "../helpers/bridge.js";
import { orderActive, untilIdle } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { CONSOLE_CSP } from "../../src/console/security-headers.js";
import { ConsoleClient, OPERATOR_TOKEN, testOperators, VIEWER_TOKEN } from "./client.js";

// The console over real HTTP against a running bridge: sessions, cookies, headers, CSRF, roles.

describe("the operator console over HTTP", () => {
  let sb: TestSandbox;
  let bridge: TestBridge;
  beforeEach(async () => {
    sb = await startTestSandbox();
    bridge = await startTestBridge(sb, { consoleOperators: testOperators });
  });
  afterEach(async () => {
    await bridge.close();
    await sb.close();
  });
  const client = () => new ConsoleClient(bridge.url);

  it("sends a visitor without a session to the login page", async () => {
    const r = await client().get("/console");
    expect(r.status).toBe(303);
    expect(r.res.headers.get("location")).toBe("/console/login");
  });

  it("logs in with the admin token into a session cookie that is HttpOnly, SameSite=Strict and scoped to /console, kept only as a hash", async () => {
    const c = client();
    const r = await c.login(TEST_ADMIN_TOKEN);
    expect(r.status).toBe(303);
    const cookie = r.res.headers.getSetCookie().find((s) => s.startsWith("lb_console="))!;
    expect(cookie).toMatch(/; Path=\/console/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).not.toMatch(/Secure/);
    const overview = await c.get("/console");
    expect(overview.status).toBe(200);
    expect(overview.text).toContain("admin (admin)");
    expect(overview.text).toContain("Renewals, next 7 days");
    expect(overview.text).toMatch(/as of <time datetime="[^"]+">/);
    const id = c.cookies.get("lb_console")!;
    // The store knows the session only by the hash of its id.
    expect(await bridge.service.store.sessions.get(id)).toBeUndefined();
  });

  it("marks the cookie Secure when a trusted proxy says the request came over HTTPS", async () => {
    await bridge.close();
    bridge = await startTestBridge(sb, { env: { TRUST_PROXY: "loopback" } });
    await fetch(`${bridge.url}/console/login`);
    const page = await fetch(`${bridge.url}/console/login`, { headers: { "x-forwarded-proto": "https" } });
    expect(page.headers.getSetCookie().join("\n")).toMatch(/lb_console_login=[^;]+;.*Secure/);
  });

  it("answers every page with the CSP, no framing, same-origin referrers and no caching", async () => {
    const c = client();
    await c.login(TEST_ADMIN_TOKEN);
    for (const path of ["/console/login", "/console", "/console/licences", "/console/jobs"]) {
      const r = await c.get(path);
      expect(r.res.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
      expect(r.res.headers.get("x-frame-options")).toBe("DENY");
      expect(r.res.headers.get("referrer-policy")).toBe("same-origin");
      expect(r.res.headers.get("cache-control")).toBe("no-store");
      expect(r.text).not.toMatch(/<script|style=/i);
    }
  });

  it("refuses a form posted without its CSRF value, or with another session's", async () => {
    const c = client();
    await c.login(TEST_ADMIN_TOKEN);
    await c.get("/console/reconcile");
    expect((await c.post("/console/reconcile", { fix: "false" }, null)).status).toBe(403);
    const other = client();
    await other.login(TEST_ADMIN_TOKEN);
    await other.get("/console");
    expect((await c.post("/console/reconcile", { fix: "false" }, other.csrf)).status).toBe(403);
    expect((await c.post("/console/reconcile", { fix: "false" })).status).toBe(200);
  });

  it("rate-limits failed logins per address: the eleventh within 15 minutes is 429, even with the right token", async () => {
    const c = client();
    for (let i = 0; i < 10; i++) expect((await c.login(`wrong-token-${i}`)).status).toBe(401);
    const r = await c.login(TEST_ADMIN_TOKEN);
    expect(r.status).toBe(429);
    expect(r.res.headers.get("retry-after")).toMatch(/^\d+$/);
  });

  it("counts failed logins on when a valid login comes in between: nine wrong, a viewer's, one wrong, then 429", async () => {
    const c = client();
    for (let i = 0; i < 9; i++) expect((await c.login(`wrong-token-${i}`)).status).toBe(401);
    expect((await c.login(VIEWER_TOKEN)).status).toBe(303);
    expect((await c.login("wrong-token-9")).status).toBe(401);
    const r = await c.login(TEST_ADMIN_TOKEN);
    expect(r.status).toBe(429);
    expect(r.text).toMatch(/try again in 15 minutes/);
  });

  it("refuses a viewer's action on the server, changing nothing", async () => {
    const id = await orderActive(bridge, {});
    const c = client();
    await c.login(VIEWER_TOKEN);
    const page = await c.get(`/console/licences/${id}`);
    expect(page.text).toContain("reads only");
    expect(page.text).not.toContain("/confirm/suspend");
    const r = await c.post(`/console/licences/${id}/suspend`);
    expect(r.status).toBe(403);
    expect(r.text).toContain("needs the operator role");
    expect((await bridge.service.services.get(id))!.status).toBe("active");
    expect((await c.post("/console/reconcile", { fix: "true" })).status).toBe(403);
    // Each refusal is in the audit trail under vera's name, as the admin API's door records its own.
    const { entries } = await bridge.service.store.audit.list({ actor: "vera" });
    expect(entries.map((e) => [e.action, e.service_id, e.outcome])).toEqual(
      expect.arrayContaining([
        ["service.suspend", id, "refused"],
        ["reconcile.fix", null, "refused"],
      ]),
    );
  });

  it("lets an operator suspend a licence through the admin API's action, but not repair reconcile drift", async () => {
    const id = await orderActive(bridge, {});
    const c = client();
    await c.login(OPERATOR_TOKEN);
    await c.get(`/console/licences/${id}/confirm/suspend`);
    const r = await c.post(`/console/licences/${id}/suspend`);
    expect(r.status).toBe(200);
    expect(r.text).toContain("Accepted");
    expect((await bridge.service.queue.list({ serviceId: id })).some((j) => j.kind === "suspend")).toBe(true);
    expect((await c.post("/console/reconcile", { fix: "true" })).status).toBe(403);
  });

  it("cancels a blocked job from the jobs page after its confirmation; the form needs its CSRF value", async () => {
    sb.sandbox.setBalance(0);
    const event = createdEvent();
    await bridge.send(event);
    const job = await waitFor(async () => (await bridge.service.queue.list({ state: "blocked", serviceId: event.service.id }))[0], 10_000, "the blocked registration");
    const c = client();
    await c.login(OPERATOR_TOKEN);
    expect((await c.get("/console/jobs")).text).toContain(`/console/jobs/${job.id}/confirm/cancel`);
    const confirm = await c.get(`/console/jobs/${job.id}/confirm/cancel`);
    expect(confirm.text).toContain(`action="/console/jobs/${job.id}/cancel"`);
    expect((await c.post(`/console/jobs/${job.id}/cancel`, {}, null)).status).toBe(403);
    expect((await bridge.service.queue.get(job.id))?.state).toBe("blocked");
    const r = await c.post(`/console/jobs/${job.id}/cancel`);
    expect(r.status).toBe(200);
    expect(r.text).toContain(`Job ${job.id} (register) is cancelled`);
    expect((await bridge.service.queue.get(job.id))?.state).toBe("cancelled");
    // A second try is refused with the admin API's words.
    const again = await c.post(`/console/jobs/${job.id}/cancel`);
    expect(again.status).toBe(409);
    expect(again.text).toContain("only failed or blocked jobs can be cancelled");
  });

  it("resends the install mail from a licence page: one mail per confirmed form, however often it is posted", async () => {
    const id = await orderActive(bridge, {});
    const c = client();
    await c.login(OPERATOR_TOKEN);
    expect((await c.get(`/console/licences/${id}`)).text).toContain(`/console/licences/${id}/confirm/resend-install-mail`);
    const confirm = await c.get(`/console/licences/${id}/confirm/resend-install-mail`);
    expect(confirm.text).toContain("ann@example.com");
    const requestId = /name="request_id" value="([^"]+)"/.exec(confirm.text)![1]!;
    expect((await c.post(`/console/licences/${id}/resend-install-mail`, { request_id: requestId }, null)).status).toBe(403);
    const first = await c.post(`/console/licences/${id}/resend-install-mail`, { request_id: requestId });
    expect(first.status).toBe(200);
    expect(first.text).toMatch(/Queued: job \d+ sends the install mail to ann@example.com/);
    // The same form posted again (a double-click): the same job.
    const second = await c.post(`/console/licences/${id}/resend-install-mail`, { request_id: requestId });
    expect(second.text).toContain("Already queued by this form");
    const resends = (await bridge.service.queue.list({ serviceId: id, kind: "mail_install" })).filter((j) => (j.payload as { resend?: string }).resend === requestId);
    expect(resends).toHaveLength(1);
    expect(first.text).toContain(`job ${resends[0]!.id} sends`);
  });

  it("resets the IP-change counter, offered only where the product limits IP changes; the form needs its CSRF value", async () => {
    const unlimited = await orderActive(bridge, { product_id: "12" });
    const limited = await orderActive(bridge, { product_id: "13" });
    await bridge.service.services.change({ serviceId: limited, patch: { ip_changes: 2 } });
    const c = client();
    await c.login(OPERATOR_TOKEN);
    expect((await c.get(`/console/licences/${unlimited}`)).text).not.toContain("/confirm/reset-ip-changes");
    const page = await c.get(`/console/licences/${limited}`);
    expect(page.text).toContain(`/console/licences/${limited}/confirm/reset-ip-changes`);
    expect(page.text).toMatch(/2 made, <strong>1<\/strong> left/);
    expect((await c.get(`/console/licences/${limited}/confirm/reset-ip-changes`)).text).toContain("(2 made) to 0");
    expect((await c.post(`/console/licences/${limited}/reset-ip-changes`, {}, null)).status).toBe(403);
    expect((await bridge.service.services.get(limited))?.ip_changes).toBe(2);
    const r = await c.post(`/console/licences/${limited}/reset-ip-changes`);
    expect(r.status).toBe(200);
    expect(r.text).toContain("is 0 again");
    expect((await bridge.service.services.get(limited))?.ip_changes).toBe(0);
    expect((await c.get(`/console/licences/${limited}`)).text).toMatch(/0 made, <strong>3<\/strong> left/);
  });

  it("refuses a viewer the new actions on the server, changing nothing", async () => {
    const id = await orderActive(bridge, { product_id: "13" });
    const c = client();
    await c.login(VIEWER_TOKEN);
    const page = await c.get(`/console/licences/${id}`);
    expect(page.text).not.toContain("/confirm/resend-install-mail");
    expect(page.text).not.toContain("/confirm/reset-ip-changes");
    for (const action of ["resend-install-mail", "reset-ip-changes"]) {
      const r = await c.post(`/console/licences/${id}/${action}`);
      expect(r.status, action).toBe(403);
      expect(r.text).toContain("needs the operator role");
    }
    expect((await bridge.service.queue.list({ serviceId: id, kind: "mail_install" })).length).toBe(1);
  });

  it("shows a licence's latest 100 history entries, newest first, and pages to the older ones", async () => {
    const id = await orderActive(bridge, {});
    // The order's install mail writes its own entry: counted once it has gone.
    await untilIdle(bridge);
    const before = (await bridge.service.services.history(id)).length;
    await bridge.service.store.services.change({ serviceId: id, history: Array.from({ length: 150 }, (_, i) => ({ action: `note ${i}`, detail: `entry ${i}` })) });
    const c = client();
    await c.login(TEST_ADMIN_TOKEN);
    const latest = await c.get(`/console/licences/${id}`);
    expect(latest.status).toBe(200);
    const shown = (text: string) => [...text.matchAll(/<strong>(note \d+)<\/strong>/g)].map((m) => m[1]);
    expect(latest.text).toContain(`${150 + before} entries in all`);
    const first = shown(latest.text);
    expect(first).toHaveLength(100);
    expect(first[0]).toBe("note 149");
    const next = /href="([^"]+\?history=[^"#]+)#history"/.exec(latest.text)![1]!.replaceAll("&amp;", "&");
    const older = await c.get(next);
    expect(older.status).toBe(200);
    const rest = shown(older.text);
    expect([...first, ...rest]).toEqual(Array.from({ length: 150 }, (_, i) => `note ${149 - i}`));
    expect(older.text).not.toContain("Older entries");
    expect((await c.get(`/console/licences/${id}?history=nonsense`)).status).toBe(422);
  });

  it("names the wrong field of a search", async () => {
    const c = client();
    await c.login(TEST_ADMIN_TOKEN);
    const r = await c.get("/console/licences?status=gone");
    expect(r.status).toBe(422);
    expect(r.text).toContain("status:");
  });

  it("refuses an action's form over 16 KiB with an HTML 413 page naming that limit, and takes one just under it", async () => {
    const id = await orderActive(bridge, {});
    const c = client();
    await c.login(OPERATOR_TOKEN);
    await c.get(`/console/licences/${id}/confirm/change-ip`);
    // The form's other fields (csrf=...&ip=) and the padding: the body is 16 KiB plus one byte.
    const over = 16 * 1024 + 1 - `csrf=${c.csrf}&ip=`.length;
    const refused = await c.post(`/console/licences/${id}/change-ip`, { ip: "x".repeat(over) });
    expect(refused.status).toBe(413);
    expect(refused.res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(refused.text).toContain("16 KiB");
    const under = await c.post(`/console/licences/${id}/change-ip`, { ip: "x".repeat(over - 1) });
    expect(under.status).toBe(422);
  });

  const pasted = JSON.stringify({ services: [{ service_identifier: "pasted-1", package_identifier: "12", ip: "203.0.113.86", customer_email: "ann@example.com", billing_cycle: "monthly" }] });

  it("takes a pasted service list of 2 MiB on the adoption page", async () => {
    const c = client();
    await c.login(TEST_ADMIN_TOKEN);
    await c.get("/console/adoption");
    // A panel's export as pasted, padded with the blanks JSON allows.
    const r = await c.post("/console/adoption", { services: pasted + " ".repeat(2 * 1024 * 1024), apply: "false" });
    expect(r.status).toBe(200);
    expect(r.text).toContain("pasted-1");
  });

  it("answers a pasted service list over 8 MiB with an HTML 413 page naming that limit", async () => {
    const c = client();
    await c.login(TEST_ADMIN_TOKEN);
    await c.get("/console/adoption");
    const r = await c.post("/console/adoption", { services: pasted + " ".repeat(8 * 1024 * 1024), apply: "false" });
    expect(r.status).toBe(413);
    expect(r.res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(r.text).toContain("8 MiB");
  });

  it("ends the session at logout: the old cookie opens nothing", async () => {
    const c = client();
    await c.login(TEST_ADMIN_TOKEN);
    await c.get("/console");
    const cookie = c.cookies.get("lb_console")!;
    expect((await c.post("/console/logout")).status).toBe(303);
    const again = await fetch(`${bridge.url}/console`, { headers: { cookie: `lb_console=${cookie}` }, redirect: "manual" });
    expect(again.status).toBe(303);
  });

  it("renders no secret on any page", async () => {
    const id = await orderActive(bridge, {});
    const c = client();
    await c.login(TEST_ADMIN_TOKEN);
    const pages = ["/console", "/console/licences", `/console/licences/${id}`, "/console/jobs", "/console/reconcile", "/console/adoption", "/console/audit"];
    const secrets = [TEST_ADMIN_TOKEN, TEST_PROVISIONING_TOKEN, TEST_SECRET, VIEWER_TOKEN, c.cookies.get("lb_console")!, "sandbox-reseller-token", "sandbox-admin-token"];
    for (const p of pages) {
      const r = await c.get(p);
      expect(r.status, p).toBe(200);
      for (const s of secrets) expect(r.text, `${p} shows a secret`).not.toContain(s);
    }
  });

  it("is off with CONSOLE=off", async () => {
    await bridge.close();
    bridge = await startTestBridge(sb, { env: { CONSOLE: "off" } });
    expect((await fetch(`${bridge.url}/console/login`)).status).toBe(404);
  });
});
