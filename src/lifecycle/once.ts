import type { JobContext } from "../jobs/runner.js";
import type { Job } from "../jobs/types.js";
import { ResellerError } from "../reseller/errors.js";

export interface Intent {
  op: string;
  /** Operations this job has already completed upstream (several licences of a bundle). */
  done?: string[];
  [key: string]: unknown;
}

export type OnceResult<T> = { confirmedEarlier: true } | { confirmedEarlier: false; value: T };

/**
 * Check-then-act with recorded intent. If an earlier attempt of this job recorded the same
 * operation and never learnt its outcome, ask upstream whether it happened (`happened`) before
 * acting again; otherwise record the intent durably, then act. A definite failure clears the
 * intent; a failure that may have taken effect keeps it for the next attempt to check.
 * Completed operations are remembered in the intent's `done` list, so a job that makes several
 * calls (one per licence of a bundle) never repeats one that succeeded before a later one failed.
 */
export interface OnceOptions {
  /**
   * Wait for the intent to be fsynced before acting. Needed where a repeat would charge again
   * (a renewal, a bundle); not where the upstream itself refuses a repeat (registering the same
   * ip and type answers "already exists") or where a repeat costs nothing. (Default: true)
   */
  durable?: boolean;
}

/** For calls that charge nothing: a repeat after a lost intent is harmless. */
export const NOT_CHARGING: OnceOptions = { durable: false };

export async function once<T>(
  job: Job,
  ctx: JobContext,
  intent: Intent,
  happened: () => Promise<boolean>,
  act: () => Promise<T>,
  options: OnceOptions = {},
): Promise<OnceResult<T>> {
  const earlier = job.intent as Intent | null;
  const done = earlier?.done ?? [];
  if (done.includes(intent.op)) return { confirmedEarlier: true };

  const remember = async (intentNow: Intent | null, durable = true) => {
    job.intent = intentNow;
    if (intentNow) await ctx.recordIntent(intentNow, { durable });
    else ctx.clearIntent();
  };
  // Losing a "done" mark to a power cut costs one licence-list check, not money: no fsync.
  const markDone = () => remember({ ...intent, done: [...done, intent.op] }, false);

  if (earlier && earlier.op === intent.op) {
    if (await happened()) {
      await markDone();
      return { confirmedEarlier: true };
    }
    ctx.logger.info({ op: intent.op }, "earlier attempt did not take effect upstream; trying again");
  }
  await remember({ ...intent, done }, options.durable ?? true);
  try {
    const value = await act();
    await markDone();
    return { confirmedEarlier: false, value };
  } catch (err) {
    if (!(err instanceof ResellerError) || !err.mayHaveTakenEffect) {
      await remember(done.length ? { op: "", done } : null, false);
    }
    throw err;
  }
}
