import cron from "node-cron";
import type { Logger } from "../log/logger.js";
import type { Sweep } from "./sweep.js";

export interface RenewalSchedule {
  stop(): void;
}

/** Runs the sweep on `expression`; a tick only enqueues, so a slow or repeated tick is harmless. */
export function scheduleRenewals(expression: string, sweep: Sweep, logger: Logger, afterSweep?: () => Promise<unknown>): RenewalSchedule {
  const task = cron.schedule(
    expression,
    async () => {
      try {
        const r = await sweep.sweep();
        if (r.queued.length) logger.info({ queued: r.queued.length, already_queued: r.alreadyQueued }, "renewal sweep");
        else logger.debug({ already_queued: r.alreadyQueued }, "renewal sweep: nothing new due");
        await afterSweep?.();
      } catch (err) {
        logger.error({ err }, "renewal sweep failed; the next tick tries again");
      }
    },
    { name: "renewal-sweep", noOverlap: true },
  );
  return { stop: () => void task.stop() };
}
