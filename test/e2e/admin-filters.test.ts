import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestBridge, startTestSandbox, TEST_ADMIN_TOKEN, type TestBridge, type TestSandbox } from "../helpers/bridge.js";
import { orderActive, untilIdle } from "../helpers/e2e-harness.js";

/**
 * The contract writes the list filters as `GET /admin/licenses?status=` and
 * `GET /admin/jobs?state=&service_id=`: a filter sent with an empty value is no filter, while a
 * key the API does not know is still refused.
 */
describe("admin list filters with an empty value", () => {
  let sb: TestSandbox;
  let bridge: TestBridge;
  let serviceId: string;

  beforeAll(async () => {
    sb = await startTestSandbox();
    bridge = await startTestBridge(sb);
    serviceId = await orderActive(bridge);
    await untilIdle(bridge);
  });

  afterAll(async () => {
    await bridge?.close();
    await sb?.close();
  });

  it.each(["?status=", "?status"])("GET /admin/licenses%s lists every licence, as without the filter", async (query) => {
    const all = await bridge.admin("/admin/licenses");
    expect(all.status).toBe(200);
    expect(all.body.licenses).toContainEqual(expect.objectContaining({ service_id: serviceId, status: "active" }));
    const res = await bridge.admin(`/admin/licenses${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual(all.body);
  });

  it.each(["?state=", "?state=&service_id=", "?state=&service_id=&kind=", "?kind="])(
    "GET /admin/jobs%s lists every job, as without the filter",
    async (query) => {
      const all = await bridge.admin("/admin/jobs");
      expect(all.status).toBe(200);
      expect(all.body.jobs).toContainEqual(expect.objectContaining({ service_id: serviceId, state: "succeeded" }));
      const res = await bridge.admin(`/admin/jobs${query}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual(all.body);
    },
  );

  it("an empty filter beside a set one leaves the set one in force", async () => {
    const res = await bridge.admin(`/admin/jobs?state=&service_id=${serviceId}`);
    expect(res.status).toBe(200);
    const jobs = res.body.jobs as { service_id: string }[];
    expect(jobs.length).toBeGreaterThan(0);
    for (const job of jobs) expect(job.service_id).toBe(serviceId);
    const none = await bridge.admin("/admin/licenses?status=terminated");
    expect(none.body).toEqual({ licenses: [] });
  });

  it.each([
    ["/admin/licenses?status=&colour=", "colour"],
    ["/admin/licenses?colour=", "colour"],
    ["/admin/jobs?state=&limit=", "limit"],
    ["/admin/jobs?State=", "State"],
  ])("%s is still refused with 422 naming the unknown key", async (path, key) => {
    const res = await bridge.admin(path);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: "validation", errors: { [key]: ["is not a known field"] } });
  });

  it.each([
    ["/admin/licenses?status=%20", "status"],
    ["/admin/licenses?status=Active", "status"],
    ["/admin/jobs?state=done", "state"],
    ["/admin/jobs?state=&state=", "state"],
  ])("%s, a value that is not empty and not valid, is still a 422", async (path, key) => {
    const res = await bridge.admin(path);
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors as object)).toEqual([key]);
  });

  it("still needs the token", async () => {
    const res = await fetch(`${bridge.url}/admin/licenses?status=`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}x` } });
    expect(res.status).toBe(401);
  });
});
