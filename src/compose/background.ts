import { resolve } from "node:path";
import { checkQueueLag } from "../alerts/queue-lag.js";
import { pricesOf } from "../catalog/prices.js";
import type { Config } from "../config/load.js";
import { sharedRead } from "../observability/shared-read.js";
import { checkForecastShortfall, renewalPrices, type ForecastDeps } from "../renewals/forecast.js";
import { checkRenewalsAtRisk, healBlockedRenewals } from "../renewals/healing.js";
import { scheduleRenewals } from "../renewals/schedule.js";
import { SCRAPE_WAIT_MS, type OwnBalance } from "../reseller/balance.js";
import { prune, scheduleRetention, type PruneReport } from "../retention/retention.js";
import type { Core } from "./core.js";
import type { Opened, ServiceOptions } from "./options.js";
import { ownBalance } from "./reseller-balance.js";
import { observeUpstream } from "./reseller-connection.js";

/** What runs beside the jobs on timers of its own, and the balance reader it and the HTTP surface read. */
export interface Background {
  /** The reseller balance of the bridge's own account, for /metrics, GET /admin/balance and the forecast. */
  balance: OwnBalance;
  /** What the forecast reads under a configuration (its prices follow a reload). */
  forecastOf(cfg: Config): ForecastDeps;
  /** One maintenance pass (renewals at risk, blocked renewals back in the queue), as the cron tick runs it. */
  maintenance(): Promise<void>;
  /** The retention prune of the running configuration; `dryRun` counts only. */
  prune(options?: { dryRun?: boolean }): Promise<PruneReport>;
  /** Starts the schedules and timers: the sweep, healing, retention, the queue's lag. */
  start(): void;
  /** A reloaded configuration for the balance reader (its account and admin token). */
  reconfigure(next: Config): void;
  /** Stops the schedules and timers. */
  stop(): void;
  /** Closes the balance reader's connections. */
  close(): Promise<void>;
}

/**
 * The background of a service, built but not started: nothing runs until `start`, which the
 * service calls once it listens and its runner runs. `running` is the configuration of the moment.
 */
export function buildBackground(core: Core, options: ServiceOptions, running: () => Config, opened: Opened): Background {
  const { store, clock, logger, metrics, alerts, sweep } = core;
  const config = core.started;

  const balance = ownBalance(config, { sandbox: core.reseller?.sandbox ?? null, clock, logger, observer: observeUpstream(logger.child({ component: "reseller" }), metrics) });
  opened.push(() => balance.close());
  // The database's gauges are one read (one statement on PostgreSQL), shared by a scrape's gauges.
  const gauges = sharedRead(() => store.gauges());
  metrics.track({
    jobCounts: async () => (await gauges()).jobs,
    queue: async () => {
      const q = (await gauges()).queue;
      return { depth: Object.values(q.queued).reduce((a, b) => a + b, 0), oldestDueAgeMs: q.oldestDueAgeMs };
    },
    openAlerts: async () => (await gauges()).openAlerts,
    resellerBalance: () => balance.read({ waitMs: SCRAPE_WAIT_MS }),
  });

  // The sweep's rule (its lead days as the sweep started), the balance reader, and the configuration's prices (its catalogue follows a reload).
  const forecastOf = (cfg: Config): ForecastDeps => ({ store, balance, prices: renewalPrices(pricesOf(cfg), cfg.catalog), leadDays: config.RENEWAL_LEAD_DAYS, clock });

  const healEveryMs = config.BLOCKED_RETRY_MINUTES * 60_000;
  // A timer must not throw: that would end the process. The next tick tries again.
  const heal = () =>
    healBlockedRenewals(store, healEveryMs).catch((err: unknown) => logger.error({ err }, "could not put blocked renewals back in the queue; trying again later"));
  // The week ahead's renewals against the balance: an alert while it will not cover them.
  const shortfall = () =>
    checkForecastShortfall(forecastOf(running()), alerts).then(
      () => undefined,
      (err: unknown) => logger.warn({ err }, "could not check the balance against the renewals due; trying again on the next tick"),
    );
  const atRisk = async () => {
    await checkRenewalsAtRisk(store, alerts);
    await shortfall();
  };
  const lagMs = config.QUEUE_LAG_ALERT_MINUTES * 60_000;
  const queueLag = () =>
    checkQueueLag(store, alerts, lagMs).catch((err: unknown) => logger.warn({ err }, "could not check the queue's lag; trying again in a minute"));
  const maintenance = async () => {
    await atRisk();
    await heal();
  };
  // RETENTION_DAYS as the running configuration has it (a SIGHUP applies a new value at the next prune).
  const outboxDir = resolve(config.dataDir, "outbox");
  const pruneNow = (o: { dryRun?: boolean } = {}) => {
    const now = running();
    return prune({ store, clock, days: now.RETENTION_DAYS, terminatedDays: now.TERMINATED_RETENTION_DAYS, auditDays: now.AUDIT_RETENTION_DAYS, outboxDir }, o);
  };

  let timers: { stop(): void } | undefined;
  return {
    balance,
    forecastOf,
    maintenance,
    prune: pruneNow,
    start() {
      const renewals = options.renewalSchedule === false ? null : scheduleRenewals(config.RENEWAL_CRON, sweep, logger.child({ component: "renewals" }), atRisk);
      // Its own timer, so healing does not depend on how often RENEWAL_CRON ticks.
      const healTimer = setInterval(() => void heal(), Math.min(60_000, healEveryMs));
      healTimer.unref();
      const retention = options.retentionSchedule === false ? null : scheduleRetention(() => pruneNow(), logger.child({ component: "retention" }));
      // Every minute, on its own timer (not in maintenance(), which tests run after moving a manual
      // clock by days): a lag is noticed within a minute of crossing QUEUE_LAG_ALERT_MINUTES.
      const lagTimer = setInterval(() => void queueLag(), 60_000);
      lagTimer.unref();
      timers = {
        stop() {
          renewals?.stop();
          retention?.stop();
          clearInterval(healTimer);
          clearInterval(lagTimer);
        },
      };
    },
    reconfigure(next) {
      balance.configure(next);
    },
    stop() {
      timers?.stop();
    },
    close: () => balance.close(),
  };
}
