import { describe, expect, it } from "vitest";
import { createdEvent, TEST_PROVISIONING_TOKEN, uniqueIp } from "../helpers/bridge.js";
import { untilIdle, upstreamCalls, usePair, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";

/** The provisioning API (service-contract.md section 8) against the real app and sandbox. */

const order = (over: Record<string, string> = {}) => ({
  service_identifier: `p-${Math.random().toString(36).slice(2, 10)}`,
  package_identifier: "12",
  ip: uniqueIp(),
  customer_email: "ann@example.com",
  customer_name: "Ann Example",
  ...over,
});

describe("provisioning API: the calls", () => {
  const pair = usePair();

  it("create (form POST) buys the licence and answers 200 with it, install command and license_key included", async () => {
    const { sb, bridge } = pair();
    const p = order({ billing_cycle: "annually" });
    const res = await bridge.provision("create", p);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      license_key: expect.stringMatching(/^lb_[0-9a-f]{24}$/),
      service_identifier: p.service_identifier,
      package_identifier: "12",
      provider: "reseller",
      status: "active",
      ip: p.ip,
      type: "cpanel",
      variant: null,
      bundle: null,
      expires_at: expect.any(String),
      paid_until: expect.any(String),
      install_command: expect.stringContaining(p.ip),
      ip_changes_left: null,
      last_error: null,
    });
    expect(sb.sandbox.ledger()).toEqual([expect.objectContaining({ op: "register", ip: p.ip, type: "cpanel", months: 12 })]);
    expect(await bridge.service.services.get(p.service_identifier)).toMatchObject({ status: "active", customer_email: "ann@example.com" });
  });

  it("create takes JSON too, and the months 1-36 as billing_cycle (or Upmind's billing_cycle_months)", async () => {
    const { sb, bridge } = pair();
    const a = order({ billing_cycle: "3" });
    expect((await bridge.provision("create", a, { as: "json" })).status).toBe(200);
    const b = order({ billing_cycle_months: "6", extra_field_upmind_sends: "ignored" });
    expect((await bridge.provision("create", b)).status).toBe(200);
    expect(sb.sandbox.ledger().map((c) => c.months)).toEqual([3, 6]);
  });

  it("every later call takes license_key or service_identifier, and answers with the licence", async () => {
    const { sb, bridge } = pair();
    const p = order({ package_identifier: "13" });
    const { body } = await bridge.provision("create", p);
    const key = body.license_key as string;
    await waitFor(async () => (await bridge.service.services.get(p.service_identifier))?.upstream_variant === "litespeed4");

    const suspended = await bridge.provision("suspend", { license_key: key });
    expect(suspended.body).toMatchObject({ success: true, status: "suspended", install_command: null });
    expect((await bridge.provision("unsuspend", { service_identifier: p.service_identifier })).body).toMatchObject({ status: "active" });
    const moved = await bridge.provision("change-ip", { license_key: key, new_ip: "203.0.113.201" });
    expect(moved.body).toMatchObject({ status: "active", ip: "203.0.113.201", ip_changes_left: 2 });
    const upgraded = await bridge.provision("change-package", { license_key: key, package_identifier: "15" });
    expect(upgraded.body).toMatchObject({ package_identifier: "15", variant: "litespeed8" });
    const renewed = await bridge.provision("renew", { license_key: key, next_due_date: "2030-01-31" });
    expect(renewed.body).toMatchObject({ paid_until: "2030-01-31T00:00:00.000Z" });
    const info = await bridge.provision("info", { license_key: key });
    expect(info.body).toMatchObject({ success: true, ip: "203.0.113.201", install_command: expect.stringContaining("203.0.113.201") });
    const ended = await bridge.provision("terminate", { license_key: key });
    expect(ended.body).toMatchObject({ status: "terminated" });

    expect(upstreamCalls(sb, "suspend", "unsuspend", "change-ip", "change-core").map((c) => c.op)).toEqual([
      "change-core",
      "suspend",
      "unsuspend",
      "change-ip",
      "change-core",
      "suspend",
    ]);
    // Each call is recorded as an event of the service, as a webhook would be.
    const history = (await bridge.service.services.history(p.service_identifier)).map((h) => h.action);
    expect(history.filter((a) => a.startsWith("received "))).toEqual([
      "received service.created",
      "received service.suspended",
      "received service.unsuspended",
      "received service.ip_changed",
      "received service.product_changed",
      "received service.renewed",
      "received service.terminated",
    ]);
  });

  it("info is a GET with the query string; an unknown licence is 404 unknown_service", async () => {
    const { bridge } = pair();
    const p = order();
    await bridge.provision("create", p);
    expect((await bridge.provision("info", { service_identifier: p.service_identifier }, { as: "query" })).body.status).toBe("active");
    for (const [call, params] of [
      ["info", { license_key: "lb_000000000000000000000000" }],
      ["suspend", { service_identifier: "nope" }],
      ["change-ip", { service_identifier: "nope", new_ip: "203.0.113.9" }],
    ] as const) {
      const res = await bridge.provision(call, params);
      expect(res.status, call).toBe(404);
      expect(res.body).toEqual({ success: false, error: "unknown service", code: "unknown_service" });
    }
  });

  it("a license_key and a service_identifier that name different services is 404, not a guess", async () => {
    const { bridge } = pair();
    const a = order();
    const b = order();
    const { body } = await bridge.provision("create", a);
    await bridge.provision("create", b);
    expect((await bridge.provision("suspend", { license_key: body.license_key as string, service_identifier: b.service_identifier })).status).toBe(404);
    expect((await bridge.service.services.get(b.service_identifier))?.status).toBe("active");
  });
});

describe("provisioning API: repeats are safe and buy nothing", () => {
  const pair = usePair();

  it("a create repeated for a licence that exists answers 200 with it and buys nothing", async () => {
    const { sb, bridge } = pair();
    const p = order();
    const first = await bridge.provision("create", p);
    const again = await bridge.provision("create", p);
    expect(again.status).toBe(200);
    expect(again.body.license_key).toBe(first.body.license_key);
    await untilIdle(bridge);
    expect(sb.sandbox.ledger()).toHaveLength(1);
    expect(await bridge.service.queue.list({ serviceId: p.service_identifier, kind: "mail_install" })).toHaveLength(1);
  });

  it("two creates for the same new service at the same moment buy one licence", async () => {
    const { sb, bridge } = pair();
    const p = order();
    const answers = await Promise.all([bridge.provision("create", p), bridge.provision("create", p), bridge.provision("create", p, { as: "json" })]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(new Set(answers.map((a) => a.body.license_key)).size).toBe(1);
    await untilIdle(bridge);
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });

  it("suspending a suspended licence and changing the IP to the current one answer 200 and change nothing upstream", async () => {
    const { sb, bridge } = pair();
    const p = order({ package_identifier: "13" });
    const { body } = await bridge.provision("create", p);
    await bridge.provision("suspend", { license_key: body.license_key as string });
    await untilIdle(bridge);
    const calls = sb.sandbox.requests().length;
    expect((await bridge.provision("suspend", { license_key: body.license_key as string })).body).toMatchObject({ status: "suspended" });
    const same = await bridge.provision("change-ip", { license_key: body.license_key as string, new_ip: p.ip });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ ip: p.ip, ip_changes_left: 3 });
    await untilIdle(bridge);
    expect(sb.sandbox.requests().slice(calls).filter((r) => r.op !== "install-command" && r.op !== "list")).toEqual([]);
  });
});

describe("provisioning API: 202 pending, then the outcome on a repeat", () => {
  const pair = usePair({ env: { PROVISION_WAIT_SECONDS: "1" } });

  it("answers 202 pending when the reseller is slow, and the same call later answers 200 with one charge", async () => {
    const { sb, bridge } = pair();
    sb.sandbox.setFaults({ latencyMs: 2_000 });
    const p = order();
    const pending = await bridge.provision("create", p);
    expect(pending.status).toBe(202);
    expect(pending.body).toEqual({ success: false, status: "pending", license_key: expect.stringMatching(/^lb_/), message: expect.stringContaining("again") });
    sb.sandbox.setFaults({ latencyMs: 0 });
    await waitStatus(bridge, p.service_identifier, "active");
    const done = await bridge.provision("create", p);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: "active", license_key: pending.body.license_key });
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });
});

describe("provisioning API: refusals", () => {
  const pair = usePair();

  it("wants the bearer token: 401 with code unauthorized, and stores nothing", async () => {
    const { bridge } = pair();
    for (const token of ["", "wrong-token-0123456789", `${TEST_PROVISIONING_TOKEN}x`]) {
      const res = await bridge.provision("create", order(), { token });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ success: false, error: expect.stringContaining("PROVISIONING_TOKEN"), code: "unauthorized" });
    }
    expect(await bridge.service.services.list()).toEqual([]);
  });

  it("names the wrong parameter in a 422, by the same rules as the webhooks", async () => {
    const { bridge } = pair();
    const taken = order();
    await bridge.provision("create", taken);
    const cases: [Record<string, string>, Record<string, unknown>, string][] = [
      [{ package_identifier: "999" }, { package_identifier: [expect.stringContaining("999")] }, "validation"],
      [{ ip: "not-an-ip" }, { ip: ["must be an IPv4 or IPv6 address"] }, "validation"],
      [{ ip: "127.0.0.1" }, { ip: [expect.stringContaining("loopback")] }, "ip_unusable"],
      [{ ip: taken.ip }, { ip: [expect.stringContaining(`service ${taken.service_identifier}`)] }, "ip_in_use"],
      [{ billing_cycle: "weekly" }, { billing_cycle: [expect.stringContaining("monthly")] }, "validation"],
      [{ next_due_date: "2026-02-31" }, { next_due_date: ["is not a real date"] }, "validation"],
      [{ customer_email: "nope" }, { customer_email: ["must be an e-mail address"] }, "validation"],
    ];
    for (const [over, errors, code] of cases) {
      const res = await bridge.provision("create", order(over));
      expect(res.status, JSON.stringify(over)).toBe(422);
      expect(res.body, JSON.stringify(over)).toEqual({ success: false, error: "Validation error", code, errors });
    }
    const missing = await bridge.provision("create", {});
    // service_identifier may be left out (Upmind's Generic provider sends it only "if known up-front"): the bridge derives one.
    expect(Object.keys(missing.body.errors as object).sort()).toEqual(["ip", "package_identifier"]);
    const noTarget = await bridge.provision("suspend", {});
    expect(noTarget.body).toMatchObject({ code: "validation", errors: { license_key: ["license_key or service_identifier is required"] } });
    expect(await bridge.service.services.list()).toHaveLength(1);
  });

  it("refuses an IP change past max_ip_changes with ip_change_limit", async () => {
    const { bridge } = pair();
    const p = order({ package_identifier: "13" });
    const { body } = await bridge.provision("create", p);
    for (let i = 1; i <= 3; i++) {
      const moved = await bridge.provision("change-ip", { license_key: body.license_key as string, new_ip: `203.0.113.${210 + i}` });
      expect(moved.body.ip_changes_left).toBe(3 - i);
    }
    const refused = await bridge.provision("change-ip", { license_key: body.license_key as string, new_ip: "203.0.113.220" });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: "ip_change_limit", errors: { new_ip: [expect.stringMatching(/max_ip_changes/)] } });
  });

  it("answers 502 with the reason and code when the purchase is blocked (insufficient balance); a repeat after the top-up buys once", async () => {
    const { sb, bridge } = pair();
    sb.sandbox.setBalance(0);
    const p = order();
    const refused = await bridge.provision("create", p);
    expect(refused.status).toBe(502);
    expect(refused.body).toMatchObject({ success: false, status: "blocked", code: "insufficient_balance", error: expect.stringMatching(/balance/i) });
    sb.sandbox.setBalance(1000);
    const done = await bridge.provision("create", p);
    expect(done.status).toBe(200);
    expect(done.body.status).toBe("active");
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });

  it("a suspend queued behind a blocked purchase answers 202 naming the purchase and why it is blocked; it runs once the purchase goes through", async () => {
    const { sb, bridge } = pair();
    sb.sandbox.setBalance(0);
    const p = order();
    const refused = await bridge.provision("create", p);
    expect(refused.status).toBe(502);
    // The suspension itself was neither refused nor blocked: it waits its turn.
    const res = await bridge.provision("suspend", { service_identifier: p.service_identifier });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ success: false, status: "pending", message: expect.stringContaining(`job ${refused.body.job_id as number} (register)`) });
    expect(res.body.message).toMatch(/insufficient balance/i);
    sb.sandbox.setBalance(1000);
    expect((await bridge.provision("create", p)).status).toBe(200);
    await waitStatus(bridge, p.service_identifier, "suspended");
    expect((await bridge.provision("suspend", { service_identifier: p.service_identifier })).body).toMatchObject({ success: true, status: "suspended" });
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });

  it("answers 404 for an unknown call, 415 for another body type, 400 for bad JSON", async () => {
    const { bridge } = pair();
    const post = (path: string, headers: Record<string, string>, body: string) =>
      fetch(`${bridge.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${TEST_PROVISIONING_TOKEN}`, ...headers }, body }).then(
        async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }),
      );
    expect(await post("/provision/v1/reissue", { "content-type": "application/json" }, "{}")).toMatchObject({ status: 404, body: { success: false, code: "not_found" } });
    expect(await post("/provision/v1/create", { "content-type": "text/plain" }, "a=1")).toMatchObject({ status: 415, body: { success: false, code: "unsupported_media_type" } });
    expect(await post("/provision/v1/create", { "content-type": "application/json" }, "{")).toMatchObject({ status: 400, body: { success: false, code: "bad_json" } });
    expect(await post("/provision/v1/create", { "content-type": "application/x-www-form-urlencoded" }, "ip=1&ip=2")).toMatchObject({
      status: 422,
      body: { errors: expect.objectContaining({ ip: ["must be given once"] }) },
    });
  });

  it("a terminated service ordered again through create is re-activated; other calls for it are 422 service_terminated", async () => {
    const { sb, bridge } = pair();
    const p = order();
    await bridge.provision("create", p);
    await bridge.provision("terminate", { service_identifier: p.service_identifier });
    const suspend = await bridge.provision("suspend", { service_identifier: p.service_identifier });
    expect(suspend.body).toMatchObject({ code: "service_terminated", errors: { service_identifier: [expect.stringContaining("terminated")] } });
    const again = await bridge.provision("create", p);
    expect(again.body).toMatchObject({ status: "active" });
    expect(sb.sandbox.ledger()).toHaveLength(1);
  });

  it("a terminated service's renew, change-ip and change-package are 422 service_terminated whatever their parameters", async () => {
    const { bridge } = pair();
    const p = order();
    const created = await bridge.provision("create", p);
    expect(created.status).toBe(200);
    // A dateless renew before the termination: a repeat of it within the day is answered for it, unless the service is terminated.
    expect((await bridge.provision("renew", { service_identifier: p.service_identifier })).status).toBe(200);
    expect((await bridge.provision("terminate", { service_identifier: p.service_identifier })).status).toBe(200);
    const target = { service_identifier: p.service_identifier };
    for (const [call, params] of [
      ["renew", {}],
      ["renew", { next_due_date: "2031-01-01" }],
      ["change-ip", { new_ip: p.ip }],
      ["change-ip", { new_ip: uniqueIp() }],
      ["change-package", { package_identifier: p.package_identifier }],
    ] as const) {
      const r = await bridge.provision(call, { ...target, ...params });
      expect({ call, params, status: r.status, code: r.body.code }).toEqual({ call, params, status: 422, code: "service_terminated" });
    }
  });

  it("billing_cycle and billing_cycle_months that disagree are a 422 naming both; alike, they are one cycle", async () => {
    const { bridge } = pair();
    const refused = await bridge.provision("create", order({ billing_cycle: "monthly", billing_cycle_months: "12" }));
    expect(refused.status).toBe(422);
    expect(Object.keys(refused.body.errors as object).sort()).toEqual(["billing_cycle", "billing_cycle_months"]);
    const alike = await bridge.provision("create", order({ billing_cycle: "annually", billing_cycle_months: "12" }));
    expect(alike.status).toBe(200);
    expect((await bridge.service.services.get(alike.body.service_identifier as string))?.months).toBe(12);
  });
});

describe("provisioning API: without PROVISIONING_TOKEN outside sandbox mode", () => {
  const pair = usePair({ env: { PROVISIONING_TOKEN: "" } });

  it("answers 404 provisioning_off, saying the API is off and how to turn it on, whatever the call or token", async () => {
    const { bridge } = pair();
    for (const call of ["create", "info", "no-such-call"]) {
      const res = await bridge.provision(call, order());
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, code: "provisioning_off", error: expect.stringContaining("set PROVISIONING_TOKEN") });
    }
  });
});

describe("provisioning API: waiting calls do not hold up the intake", () => {
  const pair = usePair({ env: { PROVISION_WAIT_SECONDS: "10", WORKER_CONCURRENCY: "2" } });

  it("40 calls waiting on a slow reseller leave webhooks answered at once", async () => {
    const { sb, bridge } = pair();
    sb.sandbox.setFaults({ latencyMs: 3_000 });
    const waiting = Array.from({ length: 40 }, () => bridge.provision("create", order()));
    await waitFor(async () => (await bridge.service.services.list()).length === 40, 10_000, "the 40 orders to be accepted");
    const started = Date.now();
    const webhooks = await Promise.all(Array.from({ length: 20 }, () => bridge.send(createdEvent())));
    const took = Date.now() - started;
    expect(webhooks.map((w) => w.status)).toEqual(Array(20).fill(202));
    // Bounded loosely: the point is "not behind the 3 s reseller", not a benchmark.
    expect(took).toBeLessThan(2_500);
    sb.sandbox.setFaults({ latencyMs: 0 });
    const answers = await Promise.all(waiting);
    expect(answers.every((a) => a.status === 200 || a.status === 202)).toBe(true);
  });
});

describe("provisioning API: a call answers for its own work, not for another job of the service", () => {
  // The lead window takes in a new monthly licence's term, so a sweep queues its upstream renewal.
  const pair = usePair({ env: { RENEWAL_LEAD_DAYS: "40" } });

  /** An active licence whose upstream renewal (the sweep's, not the panel's) is blocked for want of balance. */
  const withBlockedRenewal = async () => {
    const { sb, bridge } = pair();
    const p = order({ package_identifier: "13", next_due_date: new Date(Date.now() + 365 * 86_400_000).toISOString().slice(0, 10) });
    const created = await bridge.provision("create", p);
    expect(created.status).toBe(200);
    sb.sandbox.setBalance(0);
    await bridge.service.sweep.sweep();
    const [blocked] = await waitFor(async () => {
      const jobs = await bridge.service.queue.list({ serviceId: p.service_identifier, kind: "renew", state: "blocked" });
      return jobs.length === 1 && jobs;
    }, 10_000, "the renewal to be blocked");
    return { p, key: created.body.license_key as string, blocked: blocked! };
  };

  it("a repeated create and a change-ip to the current IP answer 200 with the licence, queue nothing and buy nothing", async () => {
    const { sb, bridge } = pair();
    const { p, key } = await withBlockedRenewal();
    const jobs = (await bridge.service.queue.list({ serviceId: p.service_identifier })).length;
    const calls = sb.sandbox.requests().length;

    const again = await bridge.provision("create", p);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ success: true, license_key: key, status: "active", ip: p.ip });
    const same = await bridge.provision("change-ip", { license_key: key, new_ip: p.ip });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ success: true, license_key: key, ip: p.ip, ip_changes_left: 3 });

    expect(await bridge.service.queue.list({ serviceId: p.service_identifier })).toHaveLength(jobs);
    expect(sb.sandbox.requests().slice(calls).filter((r) => r.op !== "install-command" && r.op !== "list")).toEqual([]);
  });

  it("a dateless renew queued behind the blocked renewal, made again to learn its outcome, is one payment", async () => {
    const { sb, bridge } = pair();
    const { p, key, blocked } = await withBlockedRenewal();
    const paidUntil = (await bridge.service.services.get(p.service_identifier))!.paid_until!;
    const answers = [await bridge.provision("renew", { license_key: key }), await bridge.provision("renew", { license_key: key })];
    expect(answers.map((a) => a.status)).toEqual([202, 202]);
    expect(await bridge.service.queue.list({ serviceId: p.service_identifier, kind: "record_payment" })).toHaveLength(1);

    sb.sandbox.setBalance(1000);
    await bridge.service.queue.retry(blocked.id);
    await waitFor(async () => (await bridge.service.services.get(p.service_identifier))!.paid_until !== paidUntil, 10_000, "the payment to be recorded");
    const done = await bridge.provision("renew", { license_key: key });
    expect(done.status).toBe(200);
    const d = new Date(paidUntil);
    d.setUTCMonth(d.getUTCMonth() + 1);
    expect(done.body.paid_until).toBe(d.toISOString());
  });

  it("a suspend queued behind the blocked renewal answers 202 naming what it waits for; once that is resolved, the same call answers 200", async () => {
    const { sb, bridge } = pair();
    const { p, key, blocked } = await withBlockedRenewal();

    const waiting = await bridge.provision("suspend", { license_key: key });
    expect(waiting.status).toBe(202);
    expect(waiting.body).toEqual({ success: false, status: "pending", license_key: key, message: expect.stringContaining(`job ${blocked.id} (renew)`) });
    expect(waiting.body.message).toMatch(/insufficient balance/);
    expect(waiting.body.message).toMatch(/again/);
    // The same call again: the same answer, and no second suspension queued.
    expect((await bridge.provision("suspend", { license_key: key })).status).toBe(202);
    expect(await bridge.service.queue.list({ serviceId: p.service_identifier, kind: "suspend" })).toHaveLength(1);
    expect((await bridge.service.services.get(p.service_identifier))?.status).toBe("active");

    sb.sandbox.setBalance(1000);
    await bridge.service.queue.retry(blocked.id);
    await waitStatus(bridge, p.service_identifier, "suspended");
    const done = await bridge.provision("suspend", { license_key: key });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ success: true, status: "suspended" });
    expect(upstreamCalls(sb, "suspend")).toHaveLength(1);
  });
});

describe("provisioning API: JSON null and blank fields", () => {
  const pair = usePair();
  /** Panels that serialise a missing value as null send this; the helper's params cannot hold null. */
  const postJson = async (call: string, params: Record<string, unknown>) => {
    const res = await fetch(`${pair().bridge.url}/provision/v1/${call}`, {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_PROVISIONING_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify(params),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  it("null for an optional parameter counts as absent, as a blank form field does", async () => {
    const { bridge } = pair();
    const p = order({ package_identifier: "13" });
    const nulls = { customer_email: null, customer_name: null, billing_cycle: null, billing_cycle_months: null, next_due_date: null };
    const created = await postJson("create", { ...p, ...nulls });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ success: true, status: "active" });
    expect(await bridge.service.services.get(p.service_identifier)).toMatchObject({ billing_cycle: "monthly", customer_email: null, customer_name: null });
    const key = created.body.license_key as string;

    const renewed = await postJson("renew", { license_key: key, service_identifier: null, next_due_date: null });
    expect(renewed.status).toBe(200);
    expect(renewed.body.paid_until).not.toBe(created.body.paid_until);
    expect((await postJson("suspend", { license_key: null, service_identifier: p.service_identifier })).body).toMatchObject({ success: true, status: "suspended" });
    expect((await postJson("unsuspend", { license_key: key, service_identifier: null })).body).toMatchObject({ success: true, status: "active" });
    expect((await postJson("change-ip", { license_key: key, service_identifier: null, new_ip: "203.0.113.230" })).body).toMatchObject({ success: true, ip: "203.0.113.230" });
    expect((await postJson("change-package", { license_key: null, service_identifier: p.service_identifier, package_identifier: "15" })).body).toMatchObject({
      success: true,
      package_identifier: "15",
    });
  });

  it("a blank form field for an optional parameter counts as absent too", async () => {
    const { bridge } = pair();
    const p = order({ customer_email: "", customer_name: " ", billing_cycle: "", billing_cycle_months: "", next_due_date: "" });
    const created = await bridge.provision("create", p);
    expect(created.status).toBe(200);
    expect(await bridge.service.services.get(p.service_identifier)).toMatchObject({ billing_cycle: "monthly", customer_email: null });
    const renewed = await bridge.provision("renew", { license_key: created.body.license_key as string, service_identifier: "", next_due_date: "" });
    expect(renewed.status).toBe(200);
    expect(renewed.body.paid_until).not.toBe(created.body.paid_until);
  });

  it("null for a required parameter is refused as if it were missing, naming it", async () => {
    const { bridge } = pair();
    const p = order();
    const key = (await bridge.provision("create", p)).body.license_key as string;
    const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
      ["create", { service_identifier: null, package_identifier: null, ip: null }, {}],
      ["create", { ...p, ip: null }, { ...p, ip: undefined }],
      ["change-ip", { license_key: key, new_ip: null }, { license_key: key }],
      ["change-package", { license_key: key, package_identifier: null }, { license_key: key }],
      ["suspend", { license_key: null, service_identifier: null }, {}],
    ];
    for (const [call, withNull, without] of cases) {
      const refused = await postJson(call, withNull);
      expect(refused.status, `${call} ${JSON.stringify(withNull)}`).toBe(422);
      expect(refused.body, `${call} ${JSON.stringify(withNull)}`).toEqual((await postJson(call, without)).body);
    }
    // service_identifier is optional (derived when absent): only the two required ones are named.
    expect((await postJson("create", { service_identifier: null, package_identifier: null, ip: null })).body.errors).toEqual({
      package_identifier: expect.any(Array),
      ip: expect.any(Array),
    });
  });
});
