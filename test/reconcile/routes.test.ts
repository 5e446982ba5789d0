import request from "supertest";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/http/app.js";
import { reconcileRouter } from "../../src/admin/reconcile-routes.js";
import { silentLogger } from "../../src/log/logger.js";
import { TEST_ADMIN_TOKEN, type TestBridge } from "../helpers/bridge.js";
import { orderActive, untilIdle, usePair } from "../helpers/e2e-harness.js";
import { behindTheBridge, depsOf, purchases } from "./helpers.js";

/** The router in an app of its own, on the running bridge's database and upstream. */
function appFor(bridge: TestBridge) {
  return createApp({
    logger: silentLogger(),
    logRequests: false,
    routers: [reconcileRouter({ adminToken: TEST_ADMIN_TOKEN, ...depsOf(bridge) })],
  });
}

const auth = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

describe("POST /admin/reconcile", () => {
  const pair = usePair();

  it("wants the admin token", async () => {
    const res = await request(appFor(pair().bridge)).post("/admin/reconcile").send({});
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: expect.any(String), code: "unauthorized" });
  });

  it("refuses a body it does not understand with the fields at fault", async () => {
    const app = appFor(pair().bridge);
    const res = await request(app).post("/admin/reconcile").set(auth).send({ fix: "yes" });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: "Validation error", code: "validation", errors: { fix: [expect.any(String)] } });
    expect((await request(app).post("/admin/reconcile").set(auth).send({ fix: true, dry: 1 })).status).toBe(422);
  });

  it("answers the drift without a body, and repairs it with {\"fix\": true}, buying nothing", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { ip: "203.0.113.120" });
    await untilIdle(bridge);
    await behindTheBridge(sb).suspend({ ip: "203.0.113.120", type: "cpanel" });
    const before = purchases(sb);
    const app = appFor(bridge);

    const look = await request(app).post("/admin/reconcile").set(auth);
    expect(look.status).toBe(200);
    expect(look.body).toEqual({
      drift: [expect.objectContaining({ kind: "status_differs", service_id: id, ip: "203.0.113.120", type: "cpanel", fixable: true })],
      fixed: [],
      manual: [],
    });

    const fix = await request(app).post("/admin/reconcile").set(auth).send({ fix: true });
    expect(fix.status).toBe(200);
    expect(fix.body.fixed).toEqual([expect.objectContaining({ kind: "status_differs", service_id: id })]);
    expect((await bridge.service.services.get(id))?.status).toBe("suspended");
    expect(purchases(sb)).toEqual(before);
  });
});
