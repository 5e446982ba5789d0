import type { NewJob } from "./writes.js";

export interface AlertOps {
  /** Opens an episode (true), or counts one more occurrence of an open one (false); `enqueue` goes with an opening. */
  raise(key: string, subject: string, detail: string, enqueue?: (openedAt: number) => NewJob): Promise<boolean>;
  /** Closes the open episodes among `keys`, in one write; returns the keys it closed. */
  resolve(keys: readonly string[]): Promise<string[]>;
  open(): Promise<{ key: string; subject: string; opened_at: number; count: number }[]>;
}
