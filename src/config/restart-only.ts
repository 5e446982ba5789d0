import type { Config } from "./load.js";

/**
 * Settings a SIGHUP does not change: the listener, the database, the runner's and the cron's
 * set-up. A reload that changes one says so and keeps the running value until a restart.
 */
export const RESTART_ONLY = [
  "HOST",
  "PORT",
  "DATABASE_PATH",
  "DATABASE_URL",
  "RESELLER_API_URL",
  "RESELLER_LEGACY_URL",
  "RESELLER_PROTOCOL",
  "RESELLER_TIMEOUT_MS",
  "RESELLER_SETTLE_SECONDS",
  "MANAGE2_URL",
  "CLN_URL",
  "WORKER_CONCURRENCY",
  "JOB_MAX_ATTEMPTS",
  "RETRY_MAX_DELAY_SECONDS",
  "BLOCKED_RETRY_MINUTES",
  "QUEUE_LAG_ALERT_MINUTES",
  "SHUTDOWN_GRACE_MS",
  "RENEWAL_CRON",
  "RENEWAL_LEAD_DAYS",
  "OPERATOR_EMAIL",
  "MAIL_FROM",
  "LOG_LEVEL",
] as const satisfies readonly (keyof Config)[];
