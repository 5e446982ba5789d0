import type { Express } from "express";
import type { Alerts } from "../alerts/alerts.js";
import type { Config } from "../config/load.js";
import { RESTART_ONLY } from "../config/restart-only.js";
import type { JobRunner } from "../jobs/runner.js";
import type { Mailer } from "../mail/index.js";
import type { Metrics } from "../observability/metrics.js";
import type { Sweep } from "../renewals/sweep.js";
import type { Upstream } from "../reseller/upstream.js";
import type { PruneReport } from "../retention/retention.js";
import type { Store } from "../store/store.js";
import { buildBackground, type Background } from "./background.js";
import { buildCore, type Core } from "./core.js";
import { serveHttp, type HttpSurface } from "./http-surface.js";
import type { Opened, ServiceOptions } from "./options.js";
import { NO_RESELLER } from "./no-reseller.js";
import { observeUpstream, type ResellerClients } from "./reseller-connection.js";

export type { ServiceOptions } from "./options.js";
// For tests that build their own reseller clients with the service's metrics.
export { observeUpstream };

export interface RunningService {
  url: string;
  /** Every business operation on the bridge's state (SQLite or PostgreSQL). */
  store: Store;
  /** The store's jobs (admin API and tests read them here). */
  queue: Store["jobs"];
  /** The store's services. */
  services: Store["services"];
  runner: JobRunner;
  /** The reseller's Upstream and clients; reading them throws when no reseller is configured. */
  readonly upstream: Upstream;
  readonly reseller: ResellerClients;
  sweep: Sweep;
  alerts: Alerts;
  mailer: Mailer;
  /** Prometheus metrics, as served at /metrics. */
  metrics: Metrics;
  /** The Express app behind `url` (the one of the running configuration). */
  readonly app: Express;
  /** The running configuration (replaced by `reload`). */
  readonly config: Config;
  /**
   * Applies a new, valid configuration (SIGHUP): tokens, secrets, the catalogue and everything
   * the HTTP surface reads take effect for requests that begin after it; `restartNeeded` names
   * the changed settings that keep their running values until a restart (RESTART_ONLY).
   */
  reload(next: Config): { restartNeeded: string[] };
  /** One maintenance pass (renewals at risk, blocked renewals back in the queue), as the cron tick runs it. */
  maintenance(): Promise<void>;
  /** The retention prune (RETENTION_DAYS of the running configuration), as the daily timer runs it; `dryRun` counts only. */
  prune(options?: { dryRun?: boolean }): Promise<PruneReport>;
  /**
   * Stops intake and the runner, waits the shutdown grace for running jobs, closes everything.
   * `unfinished`: jobs still running when the grace ran out, left to their leases; their calls
   * may still be in flight and keep the process alive until they end.
   */
  close(): Promise<{ unfinished: number }>;
}

/**
 * The composition root: the core (store, upstream, runner), the background built beside it,
 * the HTTP surface listening, then the runner and the background started.
 */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const opened: Opened = [];
  try {
    // The configuration of the moment: the one started with, then each reload's.
    const running = { config: options.config };
    const core = await buildCore(options, opened);
    const background = buildBackground(core, options, () => running.config, opened);
    // Listen before anything runs in the background: a service that cannot listen must not
    // claim jobs or tick the cron without anyone able to reach it.
    const http = await serveHttp(core, background, options, opened);
    await core.runner.start();
    background.start();
    return runningService(core, background, http, options, running);
  } catch (err) {
    for (const close of opened.reverse()) {
      try {
        await close();
      } catch (closeErr) {
        options.logger.warn({ err: closeErr }, "could not close after a failed start");
      }
    }
    throw err;
  }
}

/** The running service: its reload and its shutdown, each a sequence over the three builders' parts. */
function runningService(
  core: Core,
  background: Background,
  http: HttpSurface,
  options: ServiceOptions,
  running: { config: Config },
): RunningService {
  /**
   * A new configuration from SIGHUP, already validated: the HTTP surface is rebuilt from it
   * (tokens, webhook and panel secrets, catalogue, TRUST_PROXY, provisioning), and the jobs see
   * the new catalogue. Settings only a restart can change are named, and keep their old values.
   */
  const reload = (next: Config): { restartNeeded: string[] } => {
    const was = running.config;
    const restartNeeded = RESTART_ONLY.filter((k) => JSON.stringify(was[k]) !== JSON.stringify(next[k]));
    // Built first: a configuration the app cannot be built from changes nothing.
    const app = http.appFor(next);
    core.reconfigure(was, next);
    background.reconfigure(next);
    http.replace(was, next, app);
    running.config = next;
    return { restartNeeded };
  };

  let closing: Promise<{ unfinished: number }> | undefined;
  const close = () =>
    (closing ??= (async () => {
      http.drain();
      // Calls waiting for their work answer now (202 pending, or their outcome), while the listener is still open.
      core.waiter.releaseAll();
      background.stop();
      const { unfinished } = await core.stopWork(options.shutdownGraceMs ?? core.started.SHUTDOWN_GRACE_MS);
      await http.close();
      await background.close();
      await core.close();
      return { unfinished };
    })());

  const { store, runner, sweep, alerts, mailer, metrics } = core;
  return {
    url: http.url,
    store,
    queue: store.jobs,
    services: store.services,
    runner,
    get upstream() {
      if (!core.upstream) throw new Error(NO_RESELLER);
      return core.upstream;
    },
    get reseller() {
      if (!core.reseller) throw new Error(NO_RESELLER);
      return core.reseller;
    },
    sweep,
    alerts,
    mailer,
    metrics,
    get app() {
      return http.app;
    },
    get config() {
      return running.config;
    },
    maintenance: background.maintenance,
    prune: background.prune,
    reload,
    close,
  };
}
