import { randomUUID } from "node:crypto";
import pg from "pg";
import type { Logger } from "../../log/logger.js";
import type { PgDb } from "./database.js";

/** The channel on which instances tell each other that a job may be runnable now. */
export const JOB_READY_CHANNEL = "license_bridge_job_ready";

const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 10_000;

export interface JobReadyHub {
  /**
   * A job became runnable (called after its transaction committed): this process's listeners
   * hear it at once, the other instances through a NOTIFY.
   */
  wake(): void;
  /** Listens here; the first listener opens the LISTEN connection. */
  subscribe(listener: () => void): () => void;
  close(): Promise<void>;
}

/**
 * Wake-ups across instances with LISTEN/NOTIFY. They are hints, not the queue: the runner also
 * polls, so a notification lost to a broken connection costs a poll interval, nothing more.
 *
 * - NOTIFY is sent after the commit, on its own (a NOTIFY inside a business transaction would
 *   take PostgreSQL's notify-queue lock at every commit), at most once per turn of the event
 *   loop; the payload names this instance, whose own listeners were told already.
 * - One dedicated connection LISTENs (a pooled one would be handed out and lose it). When it
 *   breaks it is opened again with capped backoff, and the listeners are woken once, since
 *   notifications sent meanwhile are lost.
 */
export function jobReadyHub(db: PgDb, url: string, logger: Logger): JobReadyHub {
  const self = randomUUID();
  const listeners = new Set<() => void>();
  const sending = new Set<Promise<void>>();
  let closed = false;
  let sendScheduled = false;
  let client: pg.Client | undefined;
  let connecting: Promise<void> | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
  let backoff = RECONNECT_MIN_MS;
  let lostOnce = false;

  const fire = () => {
    for (const listener of [...listeners]) {
      try {
        listener();
      } catch (err) {
        logger.warn({ err }, "a job-ready listener threw");
      }
    }
  };

  const sendNow = () => {
    sendScheduled = false;
    const p = db.q("SELECT pg_notify($1, $2)", [JOB_READY_CHANNEL, self]).then(
      () => undefined,
      (err: unknown) => logger.debug({ err }, "could not notify the other instances; they find the job on their next poll"),
    );
    sending.add(p);
    void p.finally(() => sending.delete(p));
  };

  const send = () => {
    if (closed || sendScheduled) return;
    sendScheduled = true;
    setImmediate(() => {
      if (sendScheduled && !closed) sendNow();
    });
  };

  const drop = (c: pg.Client, err?: Error) => {
    if (client !== c) return;
    client = undefined;
    lostOnce = true;
    logger.warn({ err }, "the LISTEN connection to PostgreSQL broke; opening it again");
    c.end().catch(() => undefined);
    schedule();
  };

  const schedule = () => {
    if (closed || retryTimer) return;
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      start();
    }, backoff);
    retryTimer.unref();
    backoff = Math.min(backoff * 2, RECONNECT_MAX_MS);
  };

  const listen = async () => {
    const c = new pg.Client({ connectionString: url, application_name: "license-bridge listener", keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    c.on("notification", (msg) => {
      if (msg.channel === JOB_READY_CHANNEL && msg.payload !== self) fire();
    });
    c.on("error", (err) => drop(c, err));
    c.on("end", () => drop(c));
    try {
      await c.connect();
      await c.query(`LISTEN ${JOB_READY_CHANNEL}`);
    } catch (err) {
      c.end().catch(() => undefined);
      throw err;
    }
    if (closed) {
      await c.end().catch(() => undefined);
      return;
    }
    client = c;
    backoff = RECONNECT_MIN_MS;
    // Back after a break: whatever was announced meanwhile is looked for now.
    if (lostOnce) fire();
  };

  const start = () => {
    if (closed || client || connecting) return;
    connecting = listen().then(
      () => {
        connecting = undefined;
      },
      (err: unknown) => {
        connecting = undefined;
        logger.warn({ err }, "could not LISTEN for other instances' jobs; trying again");
        schedule();
      },
    );
  };

  return {
    wake() {
      fire();
      send();
    },
    subscribe(listener) {
      listeners.add(listener);
      start();
      return () => {
        listeners.delete(listener);
      };
    },
    async close() {
      // A wake-up still to be sent goes out first: the CLI's `jobs retry` closes right after.
      if (sendScheduled && !closed) sendNow();
      closed = true;
      clearTimeout(retryTimer);
      retryTimer = undefined;
      await connecting;
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
      await Promise.allSettled([...sending]);
    },
  };
}
