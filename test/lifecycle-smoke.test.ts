import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createdEvent, idle, startTestBridge, startTestSandbox, type TestBridge, type TestSandbox } from "./helpers/bridge.js";
import { waitFor } from "./helpers/wait.js";

describe("service.created end to end", () => {
  let sb: TestSandbox;
  let bridge: TestBridge;
  beforeEach(async () => {
    sb = await startTestSandbox();
    bridge = await startTestBridge(sb);
  });
  afterEach(async () => {
    await bridge.close();
    await sb.close();
  });

  it("registers a cpanel licence once and marks the service active with its companions", async () => {
    const event = createdEvent({ id: "4711", ip: "203.0.113.10" });
    const res = await bridge.send(event);
    expect(res.status).toBe(202);
    expect(res.body.status).toBe("accepted");
    const svc = await waitFor(async () => {
      const row = await bridge.service.services.get("4711");
      return row?.status === "active" ? row : undefined;
    });
    expect(JSON.parse(svc.companions)).toEqual(["softaculous", "sitepad", "ssl"]);
    expect(sb.sandbox.ledger()).toHaveLength(1);
    expect(sb.sandbox.ledger()[0]).toMatchObject({ op: "register", ip: "203.0.113.10", type: "cpanel", months: 1 });
    await waitFor(async () => await idle(bridge.service) || (await bridge.service.queue.counts()).queued === 1);
  });
});
