import type { Clock } from "../clock.js";
import type { Config } from "../config/load.js";
import type { OperatorDirectory } from "../http/auth.js";
import type { JobDefinition } from "../jobs/define.js";
import type { RunnerObserver } from "../jobs/runner.js";
import type { Logger } from "../log/logger.js";
import type { Mailer } from "../mail/index.js";
import type { Metrics } from "../observability/metrics.js";
import type { ResellerClients } from "./reseller-connection.js";

/** What `startService` is given; its three builders (core, background, HTTP) each read their part. */
export interface ServiceOptions {
  config: Config;
  logger: Logger;
  clock?: Clock;
  /**
   * Reseller clients to use instead of connecting from config (tests point them at their sandbox).
   * Build them with `observer: observeUpstream(logger, metrics)` and pass the same `metrics` to
   * have their calls counted and logged.
   */
  reseller?: ResellerClients;
  /** The metrics to record into. (Default: a fresh registry) */
  metrics?: Metrics;
  /** Extra job kinds with their handlers (tests). */
  jobs?: JobDefinition[];
  observer?: RunnerObserver;
  /** Poll interval of the job runner. (Default: 500 ms) */
  pollMs?: number;
  /** First retry delay. (Default: 2000 ms) */
  baseDelayMs?: number;
  /** A mailer instead of one built from SMTP_URL (tests). */
  mailer?: Mailer;
  /** Mail templates directory. (Default: config/mail) */
  templatesDir?: string;
  /** Run the renewal sweep on RENEWAL_CRON. (Default: true) */
  renewalSchedule?: boolean;
  /** Prune daily what RETENTION_DAYS lets go. (Default: true) */
  retentionSchedule?: boolean;
  /** Grace for running jobs at shutdown. (Default: SHUTDOWN_GRACE_MS) */
  shutdownGraceMs?: number;
  /**
   * Who may log in to the console, for a configuration. (Default: the admin API's directory,
   * every ADMIN_TOKEN as the admin named "admin" and OPERATORS_FILE's operators)
   */
  consoleOperators?: (config: Config) => OperatorDirectory;
}

/**
 * What start-up has opened so far, closed again (last first) when it fails half-way: a service
 * that cannot start leaves nothing running that would keep the process alive.
 */
export type Opened = (() => unknown)[];
