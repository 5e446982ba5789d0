import { describe, expect, it } from "vitest";
import { usePairPerFile } from "../helpers/e2e-harness.js";
import { waitFor } from "../helpers/wait.js";

/** Spellings that Number() reads as 1 (or 1000) but that are not a job id. */
const NOT_PLAIN = ["0x1", "1e0", "1.0", "+1", "01", " 1", "1e3", "0b1", "1_0", "Infinity", "0"];

describe("POST /admin/jobs/:id/retry takes plain decimal ids only", () => {
  let jobId: number;
  const pair = usePairPerFile({
    async setup({ bridge }) {
      // A job no handler knows, with one attempt: it ends failed, so a retry could requeue it.
      jobId = (await bridge.service.queue.enqueue({ kind: "no-such-kind", maxAttempts: 1 })).id;
      await waitFor(async () => (await bridge.service.queue.get(jobId))?.state === "failed", 10_000, "the job to fail");
    },
  });

  it.each(NOT_PLAIN)("%j is refused with 422 naming `id`, and the job stays failed", async (id) => {
    const { bridge } = pair();
    expect(jobId).toBe(1);
    const res = await bridge.admin(`/admin/jobs/${encodeURIComponent(id)}/retry`, { method: "POST" });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ error: "Validation error", code: "validation", field: "id", errors: { id: [expect.stringMatching(/decimal/)] } });
    expect((await bridge.service.queue.get(jobId))?.state).toBe("failed");
  });

  it("the plain id retries the job", async () => {
    const { bridge } = pair();
    const res = await bridge.admin(`/admin/jobs/${jobId}/retry`, { method: "POST" });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ job: expect.objectContaining({ id: jobId, state: "queued" }) });
  });
});
