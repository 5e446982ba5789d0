/**
 * A counting semaphore: at most `max` places held at once, the rest waiting in arrival order.
 * Unlike a wrapper around one call, a place is held until its `release` is called, so it can
 * span the life of a generator (an export's worker thread, ./export.ts).
 */
export interface Semaphore {
  /**
   * A place, once one is free; resolves with its release (a second call of which does nothing).
   * When `signal` aborts first, rejects with the signal's reason and leaves the queue: a caller
   * that went away while it waited takes no place from anyone.
   */
  acquire(signal?: AbortSignal): Promise<() => void>;
  /** Places held now (never more than `max`). */
  readonly held: number;
  /** Callers waiting for a place. */
  readonly waiting: number;
}

export function countingSemaphore(max: number): Semaphore {
  let held = 0;
  const queue: (() => void)[] = [];

  const releaser = () => {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held--;
      // Handed on at once, so a freed place never goes to a caller that came after the waiting ones.
      queue.shift()?.();
    };
  };

  return {
    acquire(signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      if (held < max) {
        held++;
        return Promise.resolve(releaser());
      }
      return new Promise((resolve, reject) => {
        const grant = () => {
          signal?.removeEventListener("abort", leave);
          held++;
          resolve(releaser());
        };
        const leave = () => {
          queue.splice(queue.indexOf(grant), 1);
          reject(signal!.reason);
        };
        signal?.addEventListener("abort", leave, { once: true });
        queue.push(grant);
      });
    },
    get held() {
      return held;
    },
    get waiting() {
      return queue.length;
    },
  };
}
