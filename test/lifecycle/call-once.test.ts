import { describe, expect, it } from "vitest";
import type { JobContext } from "../../src/jobs/define.js";
import { callOnce } from "../../src/lifecycle/call-once.js";
import { isAlreadyHeld, type Purchase } from "../../src/providers/port.js";
import { silentLogger } from "../../src/log/logger.js";

// A provider's "already held" is an answer, not an error (issue 36): callOnce takes it as a
// refusal is taken, the intent cleared and the operation not done, so the job decides from what
// is held and every purchase it then makes passes the charging rule again.

function jobAndContext() {
  const job = { intent: null as unknown, attempts: 1, maxAttempts: 5 };
  const writes: unknown[] = [];
  const ctx: JobContext = {
    logger: silentLogger(),
    recordIntent: async (intent) => {
      writes.push(intent);
    },
    clearIntent: async () => {
      writes.push(null);
    },
  };
  return { job, ctx, writes };
}

const alreadyHeld: Purchase = { alreadyHeld: true };
const bought: Purchase = { bought: { expiresAt: 1 } };

describe("an answer that did nothing", () => {
  it("clears the intent, and the operation is not counted as done", async () => {
    const { job, ctx, writes } = jobAndContext();
    const r = await callOnce(job, ctx, { op: "register" }, async () => false, async () => alreadyHeld, { nothingDone: isAlreadyHeld });
    expect(r).toEqual({ confirmedEarlier: false, value: alreadyHeld });
    expect(job.intent).toBeNull();
    expect(writes.at(-1)).toBeNull();
  });

  it("leaves the next purchase of the job to the charging rule", async () => {
    const { job, ctx } = jobAndContext();
    await callOnce(job, ctx, { op: "register_bundle" }, async () => false, async () => alreadyHeld, { nothingDone: isAlreadyHeld });
    const asked: string[] = [];
    await callOnce(job, ctx, { op: "register:cloudlinux" }, async () => false, async () => bought, {
      nothingDone: isAlreadyHeld,
      mayCharge: async () => {
        asked.push("charging rule");
      },
    });
    expect(asked).toEqual(["charging rule"]);
  });
});

describe("an answer that did something", () => {
  it("is counted as done: the same operation again in the job is not sent", async () => {
    const { job, ctx } = jobAndContext();
    await callOnce(job, ctx, { op: "register" }, async () => false, async () => bought, { nothingDone: isAlreadyHeld });
    let sent = 0;
    const again = await callOnce(job, ctx, { op: "register" }, async () => false, async () => ((sent += 1), bought), { nothingDone: isAlreadyHeld });
    expect(again).toEqual({ confirmedEarlier: true });
    expect(sent).toBe(0);
  });
});
