import { describe, expect, it } from "vitest";
import { JOB_KINDS, serviceQueueKey } from "../../src/vocabulary/job-kinds.js";
import { serviceEvent } from "../helpers/bridge.js";
import { orderActive, untilIdle, usePair, waitStatus } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";
import { behindTheBridge } from "../reconcile/helpers.js";

/**
 * Jobs still queued when the service is upgraded were written by the previous release. Their
 * payloads must still run: the runner parses every payload with its kind's schema and fails a
 * job at once when it does not fit.
 */
describe("payloads of jobs queued by the previous release", () => {
  const pair = usePair({ env: { OPERATOR_EMAIL: "ops@example.com" } });

  it("enforce_suspension without seen_at ({ip, type}) suspends the licence upstream", async () => {
    const { sb, bridge } = pair();
    const id = await orderActive(bridge, { product_id: "12", ip: "203.0.113.120" });
    await bridge.send(serviceEvent("service.suspended", id));
    await waitStatus(bridge, id, "suspended");
    await untilIdle(bridge);
    await behindTheBridge(sb).unsuspend({ ip: "203.0.113.120", type: "cpanel" });

    const { id: jobId } = await bridge.service.queue.enqueue({
      kind: JOB_KINDS.enforceSuspension,
      serviceId: id,
      queueKey: serviceQueueKey(id),
      uniqueKey: `enforce-suspension:${id}:cpanel:203.0.113.120:1`,
      payload: { ip: "203.0.113.120", type: "cpanel" },
    });
    const job = await waitFor(async () => {
      const j = await bridge.service.queue.get(jobId);
      return j && (j.state === "succeeded" || j.state === "failed") && j;
    }, 10_000, "the job to end");
    expect({ state: job.state, lastError: job.lastError }).toEqual({ state: "succeeded", lastError: null });
    expect(sb.sandbox.licenses().find((l) => l.ip === "203.0.113.120" && l.type === "cpanel")?.status).toBe("suspended");
  });

  it("alert_mail without opened_at ({key, subject, detail}) mails the operator", async () => {
    const { bridge } = pair();
    const { id: jobId } = await bridge.service.queue.enqueue({
      kind: "alert_mail",
      uniqueKey: "alert:balance:1",
      maxAttempts: 50,
      payload: { key: "balance", subject: "reseller balance too low", detail: "queued by the previous release" },
    });
    const job = await waitFor(async () => {
      const j = await bridge.service.queue.get(jobId);
      return j && (j.state === "succeeded" || j.state === "failed") && j;
    }, 10_000, "the job to end");
    expect({ state: job.state, lastError: job.lastError }).toEqual({ state: "succeeded", lastError: null });
  });
});
