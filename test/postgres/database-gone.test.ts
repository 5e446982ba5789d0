import { afterEach, describe, expect, it } from "vitest";
import { createdEvent, startTestBridge, startTestSandbox, TEST_ADMIN_TOKEN, TEST_PROVISIONING_TOKEN, TEST_SECRET, uniqueId, type TestBridge, type TestSandbox } from "../helpers/bridge.js";
import { orderActive, untilIdle } from "../helpers/e2e-harness.js";
import { freshDatabase, takeDatabaseAway } from "../helpers/postgres.js";
import { signWebhook } from "../../src/webhooks/signature.js";
import { ConsoleClient, testOperators } from "../console/client.js";

/**
 * PostgreSQL's side of "a store that has lost its database refuses every write": the database
 * dropped under the running service (taken away as a drop would, without its checkpoint: see
 * takeDatabaseAway; SQLite's deleted file is test/e2e/database-file.test.ts).
 */
describe("the PostgreSQL database dropped under a running service", () => {
  let sb: TestSandbox | undefined;
  let bridge: TestBridge | undefined;
  afterEach(async () => {
    await bridge?.close();
    await sb?.close();
    sb = bridge = undefined;
  });

  it("answers every write 503 with Retry-After, never 500 (the console as an HTML page), and charges nothing", async () => {
    sb = await startTestSandbox();
    const { name, url: databaseUrl } = await freshDatabase({ migrated: true });
    bridge = await startTestBridge(sb, { env: { DATABASE_URL: databaseUrl }, consoleOperators: testOperators });
    const { url } = bridge;
    const id = await orderActive(bridge, { product_id: "13" });
    await untilIdle(bridge);
    const job = (await bridge.service.queue.list({ serviceId: id }))[0]!;
    const operator = new ConsoleClient(url);
    await operator.login(TEST_ADMIN_TOKEN);
    await operator.get(`/console/licences/${id}`);
    const charges = sb.sandbox.ledger().length;

    await takeDatabaseAway(name);

    const body = JSON.stringify(createdEvent());
    const admin = (path: string, payload: unknown = {}) =>
      fetch(`${url}${path}`, { method: "POST", headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, "content-type": "application/json" }, body: JSON.stringify(payload) });
    type Answer = { status: number; text: string; res: Response };
    const read = async (call: Promise<Response>): Promise<Answer> => {
      const res = await call;
      return { status: res.status, text: await res.text(), res };
    };
    const calls: Record<string, () => Promise<Answer>> = {
      webhook: () => read(fetch(`${url}/webhooks/billing`, { method: "POST", headers: { "content-type": "application/json", ...signWebhook(TEST_SECRET, uniqueId(), body) }, body })),
      "provisioning create": () =>
        read(
          fetch(`${url}/provision/v1/create`, {
            method: "POST",
            headers: { authorization: `Bearer ${TEST_PROVISIONING_TOKEN}`, "content-type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams({ service_identifier: "prov-1", package_identifier: "12", ip: "203.0.113.87", customer_email: "ann@example.com" }),
          }),
        ),
      "admin resend-install-mail": () => read(admin(`/admin/services/${id}/resend-install-mail`)),
      "admin reset-ip-changes": () => read(admin(`/admin/services/${id}/reset-ip-changes`)),
      "admin job retry": () => read(admin(`/admin/jobs/${job.id}/retry`)),
      "console reset-ip-changes": () => operator.post(`/console/licences/${id}/reset-ip-changes`),
    };
    for (const [route, call] of Object.entries(calls)) {
      const { status, text, res } = await call();
      expect(status, `${route}: ${text.slice(0, 300)}`).toBe(503);
      expect(res.headers.get("retry-after"), route).toMatch(/^\d+$/);
      expect(res.headers.get("content-type"), route).toMatch(route.startsWith("console") ? /^text\/html/ : /^application\/json/);
    }
    expect(sb.sandbox.ledger()).toHaveLength(charges);
  });
});
