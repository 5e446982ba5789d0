import { describe, expect, it } from "vitest";
import { createdEvent, TEST_ADMIN_TOKEN, TEST_PROVISIONING_TOKEN } from "../helpers/bridge.js";
import { orderActive, postTo, usePairPerFile } from "../helpers/e2e-harness.js";
import { operatorsFile } from "../helpers/operators.js";
import { ConsoleClient } from "../console/client.js";

/**
 * Answers that say what is wrong with the field that is wrong (issue 34, item 10): a value of the
 * wrong type is not "required", a JSON body that is not an object is not "invalid JSON", a query
 * parameter given twice is not "NaN", an operator is "an operator", and a customer name that would
 * carry a bidirectional control into a mail is refused naming it.
 */

const TOKENS = { viewer: "answers-viewer-token-0123456789", operator: "answers-operator-token-0123456789" } as const;
const operators = operatorsFile([
  { name: "vera", role: "viewer", token: TOKENS.viewer },
  { name: "otto", role: "operator", token: TOKENS.operator },
]);

describe("answers that name what is wrong", () => {
  let active: string;
  const pair = usePairPerFile({
    env: { OPERATORS_FILE: operators },
    async setup({ bridge }) {
      active = await orderActive(bridge);
    },
  });

  const errorsOf = (body: Record<string, unknown>) => body.errors as Record<string, string[]>;

  it('change-ip with a number for ip says it must be a string, not that it "is required"', async () => {
    const { bridge } = pair();
    const res = await bridge.admin(`/admin/services/${active}/change-ip`, { method: "POST", body: JSON.stringify({ ip: 123 }) });
    expect(res.status).toBe(422);
    expect(errorsOf(res.body).ip).toEqual([expect.stringMatching(/^must be a string/)]);
    const none = await bridge.admin(`/admin/services/${active}/change-ip`, { method: "POST", body: "{}" });
    expect(errorsOf(none.body).ip).toEqual([expect.stringMatching(/^is required/)]);
  });

  describe("a JSON body that is not an object is called so, not invalid JSON", () => {
    const JSON_NOT_OBJECTS = ["null", "1", '"x"', "true", "[]"];

    it.each(JSON_NOT_OBJECTS)("the admin API: %s", async (body) => {
      const { bridge } = pair();
      for (const path of ["/admin/reconcile", `/admin/services/${active}/change-ip`]) {
        const res = await bridge.admin(path, { method: "POST", body });
        expect(res.status, path).toBe(422);
        expect(res.body, path).toMatchObject({ code: "validation", errors: { "(body)": ["must be a JSON object"] } });
      }
    });

    it.each(JSON_NOT_OBJECTS)("the provisioning API: %s", async (body) => {
      const { bridge } = pair();
      const res = await postTo(bridge.url, "/provision/v1/create", { authorization: `Bearer ${TEST_PROVISIONING_TOKEN}`, "content-type": "application/json" }, body);
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ success: false, code: "validation", errors: { "(body)": ["must be a JSON object"] } });
    });

    it.each(JSON_NOT_OBJECTS)("the billing webhook: %s", async (body) => {
      const { bridge } = pair();
      const res = await bridge.send(undefined, { rawBody: body });
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ code: "validation", errors: { "(body)": ["must be a JSON object"] } });
    });

    it("every admin route that parses JSON says so for null, whatever it reads of the body", async () => {
      const { bridge } = pair();
      for (const path of [`/admin/services/${active}/suspend`, `/admin/services/${active}/resend-install-mail`, "/admin/adopt"]) {
        const res = await bridge.admin(path, { method: "POST", body: "null" });
        expect(res.status, path).toBe(422);
        expect(res.body, path).toMatchObject({ code: "validation", errors: { "(body)": ["must be a JSON object"] } });
      }
    });

    it("broken JSON is still invalid JSON (400)", async () => {
      const { bridge } = pair();
      expect((await bridge.admin("/admin/reconcile", { method: "POST", body: "{" })).body).toMatchObject({ code: "bad_json" });
      expect((await bridge.send(undefined, { rawBody: "{" })).status).toBe(400);
    });
  });

  describe("a query parameter given twice is named and said to be given twice", () => {
    it.each([
      ["/admin/licenses?limit=1&limit=2", "limit"],
      ["/admin/licenses?cursor=a&cursor=b", "cursor"],
      ["/admin/licenses?status=active&status=failed", "status"],
      ["/admin/licenses?q=a&q=b", "q"],
      ["/admin/licenses/export?q=a&q=b", "q"],
      ["/admin/jobs?limit=1&limit=2", "limit"],
      ["/admin/jobs?state=queued&state=failed", "state"],
      ["/admin/jobs?service_id=a&service_id=b", "service_id"],
      ["/admin/services/x/history?limit=1&limit=2", "limit"],
      ["/admin/audit?limit=1&limit=2", "limit"],
      ["/admin/audit?cursor=1&cursor=2", "cursor"],
      ["/admin/forecast?days=1&days=2", "days"],
      ["/admin/balance?fresh=true&fresh=true", "fresh"],
    ])("%s names %s", async (path, field) => {
      const { bridge } = pair();
      const res = await bridge.admin(path);
      expect(res.status).toBe(422);
      expect(res.body).toEqual({ error: "Validation error", code: "validation", field, errors: { [field]: ["is given 2 times; give it once"] } });
    });

    it("the console's licence list says so too, instead of NaN", async () => {
      const { bridge } = pair();
      const client = new ConsoleClient(bridge.url);
      expect((await client.login(TEST_ADMIN_TOKEN)).status).toBe(303);
      for (const [query, field] of [["limit=1&limit=2", "limit"], ["q=a&q=b", "q"], ["status=active&status=failed", "status"]] as const) {
        const res = await client.get(`/console/licences?${query}`);
        expect(res.status, query).toBe(422);
        expect(res.text, query).toContain(`${field}: is given 2 times; give it once`);
      }
      const notANumber = await client.get("/console/licences?limit=ten");
      expect(notANumber.status).toBe(422);
      expect(notANumber.text).toContain("limit: must be a whole number from 1 to 200");
      expect(notANumber.text).not.toContain("NaN");
    });
  });

  it('a role is named with its article: "an operator", "a viewer"', async () => {
    const { bridge } = pair();
    const as = (token: string) => ({ method: "POST", headers: { authorization: `Bearer ${token}` }, body: "{}" });
    const operator = await bridge.admin("/admin/adopt", as(TOKENS.operator));
    expect(operator.status).toBe(403);
    expect(operator.body.error).toContain("otto is an operator");
    const viewer = await bridge.admin("/admin/reconcile", as(TOKENS.viewer));
    expect(viewer.body.error).toContain("vera is a viewer");
    const entries = (await bridge.service.store.audit.list({ actor: "otto" })).entries;
    expect(entries.map((e) => e.detail)).toEqual([expect.stringContaining("otto is an operator")]);
  });

  it('an IP held by another service\'s imunify360 licence is "an imunify360 licence"', async () => {
    const { bridge } = pair();
    const first = createdEvent({ product_id: "18" });
    expect((await bridge.send(first)).status).toBe(202);
    const second = await bridge.send(createdEvent({ product_id: "18", ip: first.service.ip }));
    expect(second.status).toBe(422);
    expect(errorsOf(second.body)["service.ip"]).toEqual([expect.stringContaining(`${first.service.ip} already has an imunify360 licence`)]);
  });

  describe("a customer name carrying a bidirectional or invisible format control is refused, naming the field", () => {
    const NAMES = ["Ann \u202Eelpmaxe", "Ann\u2066Example\u2069", "Ann\u200FExample", "Ann\uFEFFExample", "Ann\u061CExample"];

    it.each(NAMES)("the billing webhook: %j", async (name) => {
      const { bridge } = pair();
      const event = createdEvent();
      const res = await bridge.send({ ...event, service: { ...event.service, customer: { email: "ann@example.com", name } } });
      expect(res.status).toBe(422);
      expect(errorsOf(res.body)["service.customer.name"]).toEqual([expect.stringMatching(/^must not contain U\+[0-9A-F]{4}/)]);
      expect(await bridge.service.services.get(event.service.id)).toBeUndefined();
    });

    it("the provisioning API", async () => {
      const { bridge } = pair();
      const res = await bridge.provision("create", { service_identifier: "bidi-1", package_identifier: "12", ip: "203.0.113.91", customer_email: "ann@example.com", customer_name: "Ann \u202Eelpmaxe" });
      expect(res.status).toBe(422);
      expect(errorsOf(res.body).customer_name).toEqual([expect.stringContaining("U+202E")]);
    });

    it("names that need a joiner to be written at all are taken", async () => {
      const { bridge } = pair();
      for (const name of ["\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645", "Ann \u{1F469}\u200D\u{1F4BB}"]) {
        const event = createdEvent();
        const res = await bridge.send({ ...event, service: { ...event.service, customer: { email: "ann@example.com", name } } });
        expect(res.status, JSON.stringify(res.body)).toBe(202);
      }
    });
  });
});
