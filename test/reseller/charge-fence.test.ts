import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { JobLeaseLostError } from "../../src/jobs/errors.js";
import { createUpstream } from "../../src/reseller/upstream.js";
import { createV1Client } from "../../src/reseller/v1.js";
import { createSandbox, type RunningSandbox, type Sandbox } from "../../src/sandbox/app.js";
import { QUICK_RETRY } from "./helpers.js";

// A charging call may wait for an upstream slot (WORKER_CONCURRENCY calls in flight) after its
// job recorded the intent. The job's lease can run out meanwhile (a long pause), and another
// instance then runs the same job: the waiting call must check, once it has the slot, that its
// job is still its own, and go unsent if not.

let sandbox: Sandbox;
let running: RunningSandbox;

beforeAll(async () => {
  sandbox = createSandbox();
  running = await sandbox.listen(0);
});
afterAll(() => running.close());
beforeEach(() => sandbox.reset());

describe("the fence before a charge", () => {
  it("runs once the call holds its slot, after the call ahead of it has ended, and stops it unsent when it throws", async () => {
    const v1 = createV1Client({ baseUrl: running.apiUrl, token: "sandbox-reseller-token", retry: QUICK_RETRY });
    const upstream = createUpstream("v1", v1, null, { maxInFlight: 1 });
    sandbox.setFaults({ latencyMs: 300 });
    // What the sandbox had answered when the fence ran.
    let seenAtFence: unknown;
    const ahead = upstream.register("203.0.113.80", "cpanel", 1);
    const fenced = upstream.register("203.0.113.81", "cpanel", 1, {
      beforeSend: async () => {
        seenAtFence = sandbox.requests().map((r) => [r.op, r.params.ip, r.status]);
        throw new JobLeaseLostError();
      },
    });
    await expect(fenced).rejects.toBeInstanceOf(JobLeaseLostError);
    await ahead;
    expect(seenAtFence).toEqual([["register", "203.0.113.80", 200]]);
    expect(sandbox.requests().filter((r) => r.op === "register").map((r) => r.params.ip)).toEqual(["203.0.113.80"]);
    expect(sandbox.ledger()).toHaveLength(1);
  });

  it("lets the call go when the fence passes (renew and bundle too)", async () => {
    const v1 = createV1Client({ baseUrl: running.apiUrl, token: "sandbox-reseller-token", retry: QUICK_RETRY });
    const upstream = createUpstream("v1", v1, null, { maxInFlight: 1 });
    let fences = 0;
    const beforeSend = async () => void fences++;
    await upstream.register("203.0.113.82", "cpanel", 1, { beforeSend });
    await upstream.renew("203.0.113.82", "cpanel", 1, { beforeSend });
    await upstream.registerBundle("203.0.113.83", "cpanel-cloudlinux", 1, { beforeSend });
    expect(fences).toBe(3);
    expect(sandbox.ledger().map((c) => c.op)).toEqual(["register", "renew", expect.stringMatching(/bundle/)]);
  });
});
