import { describe, expect, it } from "vitest";
import { createdEvent, idle } from "./helpers/bridge.js";
import { usePair } from "./helpers/e2e-harness.js";
import { waitFor } from "./helpers/wait.js";

describe("service.created end to end", () => {
  // A pair per test, not per file: the test counts every charge the sandbox took.
  const pair = usePair();

  it("registers a cpanel licence once and marks the service active with its companions", async () => {
    const { sb, bridge } = pair();
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
