import type { Clock } from "../clock.js";
import { JobDeferredError, JobFailedError, JobLeaseLostError } from "../jobs/errors.js";
import type { JobContext } from "../jobs/define.js";
import type { Job } from "../vocabulary/jobs.js";
import { ResellerError } from "../reseller/errors.js";
import { checkCharge, type ChargePurpose } from "../intake/charge-rule.js";
import type { LifecycleDeps } from "./deps.js";

export interface Intent {
  op: string;
  /** Operations this job has already completed upstream (several licences of a bundle). */
  done?: string[];
  /**
   * When the answer to `op` was lost (timeout, dropped connection, a gateway's 502 or 504, or a
   * crash during the call): the licence list is not asked before the settle window after it has
   * passed.
   */
  lost_at?: number;
  /**
   * The upstream answered `op` with an error that may have come after the work (its own 5xx, an
   * answer we could not read): the call is over, so the next attempt asks the licence list at
   * once, without the settle window, and sends the call again only if the list shows no effect.
   */
  answered?: true;
  [key: string]: unknown;
}

export type OnceResult<T> = { confirmedEarlier: true } | { confirmedEarlier: false; value: T };

export interface OnceOptions {
  /**
   * Wait for the intent to be fsynced before acting. Needed where a repeat could charge again;
   * not where a repeat costs nothing. (Default: true)
   */
  durable?: boolean;
  /**
   * For charging calls (register, renew, bundle): after a lost answer, how long the reseller
   * may still be carrying the call out (RESELLER_SETTLE_SECONDS). Until it has passed, the
   * licence list is not asked and the call is not sent again: the job waits instead.
   * (Default: none, for calls that a repeat cannot make cost twice)
   */
  settle?: { ms: number; clock: Clock };
  /**
   * For charging calls: the charging rule, checked right before the call is announced and sent
   * (throws JobSkippedError when the decision to buy no longer holds). Checked before the first
   * charge of a job only: a bundle's renewal is one decision, not one per component.
   */
  mayCharge?: () => Promise<void>;
  /**
   * Whether an answer says the call did nothing (a provider that already held the licence:
   * the port's `alreadyHeld`). Such an answer is definite, as a refusal is: the intent is
   * cleared and the operation is not counted as done, so the caller decides from what is held
   * and a later attempt sends it again. (Default: every answer is the call done)
   */
  nothingDone?: (value: unknown) => boolean;
}

/** For calls that charge nothing: a repeat after a lost intent is harmless. */
export const NOT_CHARGING: OnceOptions = { durable: false };

/**
 * For calls that charge money: the charging rule is checked right before the send (see
 * charge-rule.ts), the intent is fsynced first, and a lost answer waits out the settle window.
 */
export function charging(
  deps: Pick<LifecycleDeps, "store" | "settleMs" | "clock">,
  job: Pick<Job, "id" | "eventId" | "serviceId">,
  purpose: ChargePurpose,
): OnceOptions {
  return { durable: true, settle: { ms: deps.settleMs, clock: deps.clock }, mayCharge: () => checkCharge(deps, job, purpose) };
}

/**
 * Check-then-act with recorded intent. If an earlier attempt of this job recorded the same
 * operation and never learnt its outcome, ask upstream whether it happened (`happened`) before
 * acting again; otherwise record the intent durably, then act. A definite failure clears the
 * intent; a failure that may have taken effect keeps it for the next attempt to check.
 * Completed operations are remembered in the intent's `done` list, so a job that makes several
 * calls (one per licence of a bundle) never repeats one that succeeded before a later one failed.
 *
 * With `settle` (charging calls), the check waits until the settle window after the lost answer
 * has passed: the reseller has no idempotency key and may finish a call after we gave up on it,
 * and a list read too early would send the charge a second time.
 */
export async function callOnce<T>(
  job: Pick<Job, "intent" | "attempts" | "maxAttempts">,
  ctx: JobContext,
  intent: Intent,
  happened: () => Promise<boolean>,
  /** Makes the call; a charging call passes `beforeSend` to the upstream (ChargeOptions). */
  act: (beforeSend: () => Promise<void>) => Promise<T>,
  options: OnceOptions = {},
): Promise<OnceResult<T>> {
  const earlier = job.intent as Intent | null;
  const done = earlier?.done ?? [];
  if (done.includes(intent.op)) return { confirmedEarlier: true };

  const remember = async (intentNow: Intent | null, durable = true) => {
    job.intent = intentNow;
    if (intentNow) await ctx.recordIntent(intentNow, { durable });
    else await ctx.clearIntent();
  };
  // The "done" mark is kept in memory only: the job's next write carries it (the next operation's
  // intent holds the `done` list, a failure writes it, a success clears the intent anyway). Lost
  // to a crash before then, it costs a licence-list check on the next attempt (after the settle
  // window, for a charge), never a second purchase; and a write per operation less.
  const markDone = () => {
    job.intent = { op: "", done: [...done, intent.op] };
  };
  const settle = options.settle;

  if (earlier && earlier.op === intent.op) {
    if (settle && !earlier.answered) {
      // No lost_at: the process died during the call, so the answer was lost just now, as far as we know.
      const lostAt = earlier.lost_at ?? settle.clock.now();
      if (earlier.lost_at === undefined) await remember({ ...earlier, lost_at: lostAt }, false);
      const until = lostAt + settle.ms;
      if (settle.clock.now() < until) {
        throw new JobDeferredError(until, settleMessage(intent.op, until, "an earlier attempt's answer was lost"), false);
      }
    }
    if (await happened()) {
      markDone();
      return { confirmedEarlier: true };
    }
    // A lost answer defers instead of failing, so the attempt limit is enforced here, before another call.
    if (job.attempts > job.maxAttempts) {
      throw new JobFailedError(
        `gave up after ${job.maxAttempts} attempt(s): the last ${intent.op.replace(/:.*/, "")} got no usable answer, and the licence list shows it did not take effect`,
      );
    }
    ctx.logger.info({ op: intent.op }, "earlier attempt did not take effect upstream; trying again");
  }
  // The decision to buy is checked against the service as it is now, not as it was when the job began.
  if (options.mayCharge && done.length === 0) await options.mayCharge();
  await remember({ ...intent, done }, options.durable ?? true);
  // Once the call holds its upstream slot, the intent is written again: the write finds whether
  // this worker still holds the job (it may have waited, or been paused, past its lease), and
  // stops the call unsent if not (JobLeaseLostError).
  const beforeSend = () => ctx.recordIntent({ ...intent, done }, { durable: false });
  let value: T;
  try {
    value = await act(beforeSend);
  } catch (err) {
    // The job is another worker's now: nothing of it is this attempt's to write.
    if (err instanceof JobLeaseLostError) throw err;
    const mayHaveTakenEffect = err instanceof ResellerError && err.mayHaveTakenEffect;
    if (!mayHaveTakenEffect) {
      await remember(done.length ? { op: "", done } : null, false);
    } else if (settle && !(err as ResellerError).mayStillTakeEffect) {
      // The contract retries a 5xx within 2 s; the settle window is for answers that never came.
      await remember({ ...intent, done, answered: true }, false);
    } else if (settle) {
      const lostAt = settle.clock.now();
      await remember({ ...intent, done, lost_at: lostAt }, false);
      throw new JobDeferredError(lostAt + settle.ms, settleMessage(intent.op, lostAt + settle.ms, (err as Error).message), true, { cause: err });
    }
    throw err;
  }
  // Answered with nothing done (already held): cleared as after a refusal, never counted as done.
  if (options.nothingDone?.(value)) await remember(done.length ? { op: "", done } : null, false);
  else markDone();
  return { confirmedEarlier: false, value };
}

function settleMessage(op: string, until: number, why: string): string {
  return (
    `${why}; the provider may still be carrying out ${op.replace(/:.*/, "")}, so it is not sent again: ` +
    `the licence list decides at ${new Date(until).toISOString()} (RESELLER_SETTLE_SECONDS)`
  );
}
