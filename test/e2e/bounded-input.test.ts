import { describe, expect, it } from "vitest";
import { TEST_ADMIN_TOKEN, type TestBridge } from "../helpers/bridge.js";
import { orderActive, usePair } from "../helpers/e2e-harness.js";
import { operatorsFile } from "../helpers/operators.js";
import { ConsoleClient } from "../console/client.js";

/**
 * Every id is bounded before it is audited or stored (issue 34, item 7): a service id in a path
 * follows the intake's rule for service ids (at most 64 letters, digits and . _ : -), a job id
 * its plain digits. One that does not is answered 422 naming `id`, whoever sends it and
 * whichever way (admin API, console), and leaves no entry: it names no service or job that can
 * exist, so there is nothing about one to record, and the trail cannot be grown with it.
 */

const TOKENS = { viewer: "bounds-viewer-token-0123456789", operator: "bounds-operator-token-0123456789" } as const;
const operators = operatorsFile([
  { name: "vera", role: "viewer", token: TOKENS.viewer },
  { name: "otto", role: "operator", token: TOKENS.operator },
]);

const LONG_ID = "x".repeat(6000);
type Who = keyof typeof TOKENS | "admin";

async function post(bridge: TestBridge, who: Who, path: string, body: unknown = {}) {
  const token = who === "admin" ? TEST_ADMIN_TOKEN : TOKENS[who];
  return bridge.admin(path, { method: "POST", headers: { authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
}

const auditTotal = async (bridge: TestBridge) => (await bridge.service.store.audit.list()).total;

/** The 422 of an id that breaks its rule: the field named, the rule said. */
const badId = (rule: RegExp) => ({ code: "validation", field: "id", errors: { id: [expect.stringMatching(rule)] } });

describe("ids are bounded before anything is audited", () => {
  const pair = usePair({ env: { OPERATORS_FILE: operators } });

  it("a viewer's suspend of a 6,000-character service id is a 422 naming id, and leaves no entry", async () => {
    const { bridge } = pair();
    const res = await post(bridge, "viewer", `/admin/services/${LONG_ID}/suspend`);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject(badId(/at most 64 characters/));
    expect(await auditTotal(bridge)).toBe(0);
  });

  it.each([
    ["suspend", {}],
    ["unsuspend", {}],
    ["change-ip", { ip: "203.0.113.77" }],
    ["resend-install-mail", {}],
    ["reset-ip-changes", {}],
    ["no-such-action", {}],
  ])("an operator's %s of a 6,000-character service id is a 422 naming id, and nothing is stored", async (action, body) => {
    const { bridge } = pair();
    const res = await post(bridge, "operator", `/admin/services/${LONG_ID}/${action}`, body);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject(badId(/at most 64 characters/));
    expect(await auditTotal(bridge)).toBe(0);
    expect((await bridge.service.store.counts()).events).toBe(0);
  });

  it("a service id with characters no service id has is refused the same way", async () => {
    const { bridge } = pair();
    const res = await post(bridge, "viewer", `/admin/services/${encodeURIComponent("a b<c>")}/suspend`);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject(badId(/letters, digits/));
    expect(await auditTotal(bridge)).toBe(0);
  });

  it("a viewer's retry of a 6,000-character job id is a 422 naming id, and leaves no entry", async () => {
    const { bridge } = pair();
    const res = await post(bridge, "viewer", `/admin/jobs/${"9".repeat(6000)}/retry`);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject(badId(/decimal digits/));
    expect(await auditTotal(bridge)).toBe(0);
  });

  it("an id at its limit is still an id: a viewer's refused suspend of a 64-character id is audited under it", async () => {
    const { bridge } = pair();
    const id = await orderActive(bridge, { id: "y".repeat(64) });
    expect((await post(bridge, "viewer", `/admin/services/${id}/suspend`)).status).toBe(403);
    expect((await bridge.service.store.audit.list()).entries).toEqual([expect.objectContaining({ actor: "vera", service_id: id, outcome: "refused" })]);
  });

  it("a refused action on an id the bridge does not know records no id: an operator's token put there never reaches the trail", async () => {
    const { bridge } = pair();
    expect((await post(bridge, "viewer", `/admin/services/${TOKENS.operator}/suspend`)).status).toBe(403);
    const { entries } = await bridge.service.store.audit.list();
    expect(entries).toEqual([expect.objectContaining({ actor: "vera", service_id: null, outcome: "refused" })]);
    expect(JSON.stringify(entries)).not.toContain(TOKENS.operator);
  });

  it.each(["suspend", "resend-install-mail", "reset-ip-changes"])("an operator's %s of an unknown id (an admin's token) answers 404 and stores no id", async (action) => {
    const { bridge } = pair();
    expect((await post(bridge, "operator", `/admin/services/${TEST_ADMIN_TOKEN}/${action}`)).status).toBe(404);
    expect(JSON.stringify((await bridge.service.store.audit.list()).entries)).not.toContain(TEST_ADMIN_TOKEN);
  });

  it("the console's refusal of a viewer's action on an unknown id stores no id", async () => {
    const { bridge } = pair();
    const viewer = new ConsoleClient(bridge.url);
    expect((await viewer.login(TOKENS.viewer)).status).toBe(303);
    await viewer.get("/console/licences");
    expect((await viewer.post(`/console/licences/${TOKENS.operator}/suspend`, {})).status).toBe(403);
    const { entries } = await bridge.service.store.audit.list();
    expect(entries).toEqual([expect.objectContaining({ actor: "vera", service_id: null, outcome: "refused" })]);
  });

  it("the console's action forms refuse a 6,000-character service id with 422 naming id, and leave no entry", async () => {
    const { bridge } = pair();
    await orderActive(bridge);
    for (const token of [TOKENS.viewer, TOKENS.operator]) {
      const client = new ConsoleClient(bridge.url);
      expect((await client.login(token)).status).toBe(303);
      await client.get("/console/licences");
      for (const action of ["suspend", "change-ip", "resend-install-mail", "reset-ip-changes"]) {
        const res = await client.post(`/console/licences/${LONG_ID}/${action}`, action === "change-ip" ? { ip: "203.0.113.78" } : {});
        expect(res.status, action).toBe(422);
        expect(res.text, action).toMatch(/id: must be at most 64 characters/);
      }
    }
    expect(await auditTotal(bridge)).toBe(0);
  });
});
