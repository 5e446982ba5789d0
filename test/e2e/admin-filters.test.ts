import { describe, expect, it } from "vitest";
import { TEST_ADMIN_TOKEN } from "../helpers/bridge.js";
import { orderActive, untilIdle, usePairPerFile } from "../helpers/e2e-harness.js";

/**
 * The contract writes the list filters as `GET /admin/licenses?status=` and
 * `GET /admin/jobs?state=&service_id=`: a filter sent with an empty value is no filter, while a
 * key the API does not know is still refused.
 */
describe("admin list filters with an empty value", () => {
  let serviceId: string;
  const pair = usePairPerFile({
    async setup({ bridge }) {
      serviceId = await orderActive(bridge);
      await untilIdle(bridge);
    },
  });

  it.each(["?status=", "?status"])("GET /admin/licenses%s lists every licence, as without the filter", async (query) => {
    const { bridge } = pair();
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
      const { bridge } = pair();
      const all = await bridge.admin("/admin/jobs");
      expect(all.status).toBe(200);
      expect(all.body.jobs).toContainEqual(expect.objectContaining({ service_id: serviceId, state: "succeeded" }));
      const res = await bridge.admin(`/admin/jobs${query}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual(all.body);
    },
  );

  it("an empty filter beside a set one leaves the set one in force", async () => {
    const { bridge } = pair();
    const res = await bridge.admin(`/admin/jobs?state=&service_id=${serviceId}`);
    expect(res.status).toBe(200);
    const jobs = res.body.jobs as { service_id: string }[];
    expect(jobs.length).toBeGreaterThan(0);
    for (const job of jobs) expect(job.service_id).toBe(serviceId);
    const none = await bridge.admin("/admin/licenses?status=terminated");
    expect(none.body).toEqual({ licenses: [], next_cursor: null, total: 0 });
  });

  it.each([
    ["/admin/licenses?status=&colour=", "colour"],
    ["/admin/licenses?colour=", "colour"],
    ["/admin/jobs?state=&offset=", "offset"],
    ["/admin/jobs?State=", "State"],
  ])("%s is still refused with 422 naming the unknown key", async (path, key) => {
    const { bridge } = pair();
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
    const { bridge } = pair();
    const res = await bridge.admin(path);
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors as object)).toEqual([key]);
  });

  it("GET /admin/licenses?provider= lists one provider's licences, each licence showing its provider, and refuses a provider it does not know", async () => {
    const { bridge } = pair();
    const bought = await orderActive(bridge);
    // Where the Manage2 path will record its licence (issue 36): its provider, its package and Manage2's licence id.
    await bridge.service.store.services.change({ serviceId: bought, patch: { provider: "manage2", sku: "12345", upstream_id: "L-4242" } });

    const manage2 = await bridge.admin("/admin/licenses?provider=manage2&status=active");
    expect(manage2.status, JSON.stringify(manage2.body)).toBe(200);
    expect(manage2.body).toMatchObject({ licenses: [{ service_id: bought, provider: "manage2", status: "active" }], next_cursor: null, total: 1 });
    const reseller = await bridge.admin("/admin/licenses?provider=reseller&limit=1");
    expect(reseller.body).toMatchObject({ licenses: [{ service_id: serviceId, provider: "reseller" }], total: 1 });
    expect((await bridge.admin("/admin/licenses?provider=cln")).body).toEqual({ licenses: [], next_cursor: null, total: 0 });
    expect((await bridge.admin("/admin/licenses?provider=")).body).toEqual((await bridge.admin("/admin/licenses")).body);
    expect((await bridge.admin(`/admin/services/${bought}`)).body).toMatchObject({ service_id: bought, provider: "manage2" });
    const exported = await fetch(`${bridge.url}/admin/licenses/export?provider=manage2`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    expect((await exported.text()).trim().split("\n").map((line) => (JSON.parse(line) as { service_id: string }).service_id)).toEqual([bought]);

    const unknown = await bridge.admin("/admin/licenses?provider=cpanel");
    expect(unknown.status).toBe(422);
    expect(unknown.body).toMatchObject({ code: "validation", field: "provider" });
    expect(Object.keys(unknown.body.errors as object)).toEqual(["provider"]);
  });

  it("still needs the token", async () => {
    const { bridge } = pair();
    const res = await fetch(`${bridge.url}/admin/licenses?status=`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}x` } });
    expect(res.status).toBe(401);
  });
});
