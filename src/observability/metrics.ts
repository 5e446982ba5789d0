import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { ALERT_JOB_KIND } from "../alerts/alerts.js";
import type { AttemptOutcome, RunnerObserver } from "../jobs/runner.js";
import { JOB_STATES } from "../vocabulary/jobs.js";
import { JOB_KINDS } from "../vocabulary/job-kinds.js";
import type { UpstreamCallReport } from "../reseller/transport.js";
import { DEFAULT_PROVIDER, type ProviderName } from "../vocabulary/provider-names.js";

/** Every metric name starts with this (the service contract, section 4). */
export const METRIC_PREFIX = "license_bridge_";

/** Job kinds whose attempts are mail sends, counted in `license_bridge_mails_total`. */
export const MAIL_JOB_KINDS: readonly string[] = [JOB_KINDS.installMail, ALERT_JOB_KIND];

/** Outcomes that end a renewal job; a retry is counted with the job's attempts only. */
const FINAL_OUTCOMES: readonly AttemptOutcome[] = ["succeeded", "skipped", "failed", "blocked"];

/** One upstream call as reported, with the provider that answered it (the reseller when not named). */
export type ProviderCallReport = UpstreamCallReport & { provider?: ProviderName };

/** What the scrape-time gauges read: wired once the queue and the alerts exist. */
export interface MetricsSources {
  /** Jobs by state, e.g. `() => queue.counts()`. */
  jobCounts?: () => Promise<Partial<Record<string, number>>> | Partial<Record<string, number>>;
  /**
   * How far the queue is behind, e.g. `() => queue.queue()`: jobs queued, and how long the due
   * job that has waited longest has waited (0 when none waits).
   */
  queue?: () => Promise<{ depth: number; oldestDueAgeMs: number }> | { depth: number; oldestDueAgeMs: number };
  /** Open alert episodes, e.g. `async () => (await alerts.open()).length`. */
  openAlerts?: () => Promise<number> | number;
  /**
   * The reseller balance of the bridge's own account (src/reseller/balance.ts): `balance` null
   * when unknown, `checkedAt` null when the reseller was not asked (no account configured).
   */
  resellerBalance?: () => Promise<{ balance: number | null; checkedAt: number | null }>;
}

export interface Metrics {
  /** This instance's own registry (never prom-client's global one), so several services can run in one process. */
  readonly registry: Registry;
  /** Content-Type of `scrape()`'s text. */
  readonly contentType: string;
  /** For `billingWebhookRouter({ observer })`. */
  readonly webhooks: { received(source: string, type: string, outcome: string): void };
  /** For `provisioningRouter({ observer })`: calls by the module that made them. */
  readonly provisioning: { called(call: string, module: string, status: number): void };
  /** For the job runner's observer (chain it with the others). */
  readonly jobs: Required<Pick<RunnerObserver, "attemptFinished">>;
  /**
   * Every provider's calls (the reseller's clients, Manage2's and CLN's), each report naming its
   * provider; one without is the reseller's. Wire it through compose's `observeUpstream`.
   */
  readonly upstream: { callFinished(report: ProviderCallReport): void };
  /** Points the scrape-time gauges at their sources; a later call replaces earlier ones. */
  track(sources: MetricsSources): void;
  /** The Prometheus text exposition of every metric. */
  scrape(): Promise<string>;
}

const JOB_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const UPSTREAM_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30];

/** Runs an observer's body; counting must never break the webhook, job or call it watches. */
function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // A metric that cannot be recorded is lost; the work it describes is not.
  }
}

/** Reads a source at scrape time; a closed database must not break the scrape of everything else. */
async function read<T>(source: (() => Promise<T> | T) | undefined): Promise<T | undefined> {
  try {
    return await source?.();
  } catch {
    return undefined;
  }
}

/**
 * The service's Prometheus metrics, all prefixed `license_bridge_`: webhooks, jobs, upstream
 * calls, renewals, mails and alerts, plus the process defaults (CPU, memory, event loop).
 * Counters move through the observers; the queue and alert gauges are read when scraped.
 */
export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
  let sources: MetricsSources = {};
  const registers = [registry];

  const provisioningCalls = new Counter({
    name: `${METRIC_PREFIX}provisioning_calls_total`,
    help: 'Provisioning API calls by call, calling module ("panel/version" from its User-Agent, or "other") and HTTP status.',
    labelNames: ["call", "module", "status"] as const,
    registers,
  });

  const webhooksTotal = new Counter({
    name: `${METRIC_PREFIX}webhooks_total`,
    help: "Webhook deliveries by source, event type and outcome (accepted, duplicate, unknown_service, invalid, unauthorized, ...).",
    labelNames: ["source", "type", "outcome"] as const,
    registers,
  });
  new Gauge({
    name: `${METRIC_PREFIX}jobs`,
    help: "Jobs by state, read at scrape time from counters kept with the writes (a few rows, however many jobs).",
    labelNames: ["state"] as const,
    registers,
    async collect() {
      this.reset();
      const counts = await read(sources.jobCounts);
      if (!counts) return;
      for (const state of JOB_STATES) this.set({ state }, counts[state] ?? 0);
    },
  });
  // Both read the same source, which costs two or three index look-ups whatever the backlog.
  new Gauge({
    name: `${METRIC_PREFIX}queue_depth`,
    help: "Jobs queued (due now or waiting for a retry's time), read at scrape time.",
    registers,
    async collect() {
      const q = await read(sources.queue);
      if (q === undefined) this.reset();
      else this.set(q.depth);
    },
  });
  new Gauge({
    name: `${METRIC_PREFIX}queue_oldest_due_seconds`,
    help: "How long the due job that has waited longest to start has waited (0 when none waits); QUEUE_LAG_ALERT_MINUTES alerts on it.",
    registers,
    async collect() {
      const q = await read(sources.queue);
      if (q === undefined) this.reset();
      else this.set(q.oldestDueAgeMs / 1000);
    },
  });
  const jobDuration = new Histogram({
    name: `${METRIC_PREFIX}job_duration_seconds`,
    help: "Duration of job attempts by kind and outcome (succeeded, retry, deferred, failed, blocked).",
    labelNames: ["kind", "outcome"] as const,
    buckets: JOB_BUCKETS,
    registers,
  });
  const jobAttempts = new Counter({
    name: `${METRIC_PREFIX}job_attempts_total`,
    help: "Job attempts by kind and outcome (succeeded, retry, deferred, failed, blocked).",
    labelNames: ["kind", "outcome"] as const,
    registers,
  });
  // One series name for every provider's calls: a provider is a label, so a dashboard or alert
  // on upstream errors covers Manage2 and CLN as it covered the reseller.
  const upstreamCalls = new Counter({
    name: `${METRIC_PREFIX}upstream_calls_total`,
    help: 'Provider API calls (retries within a call included) by provider (reseller, manage2, cln), operation and outcome ("ok" or the error kind).',
    labelNames: ["provider", "operation", "outcome"] as const,
    registers,
  });
  const upstreamDuration = new Histogram({
    name: `${METRIC_PREFIX}upstream_call_duration_seconds`,
    help: "Duration of provider API calls by provider and operation.",
    labelNames: ["provider", "operation"] as const,
    buckets: UPSTREAM_BUCKETS,
    registers,
  });
  const renewals = new Counter({
    name: `${METRIC_PREFIX}renewals_total`,
    help: "Renewal jobs that ended, by outcome (succeeded, including terms found already renewed; failed; blocked).",
    labelNames: ["outcome"] as const,
    registers,
  });
  const mails = new Counter({
    name: `${METRIC_PREFIX}mails_total`,
    help: "Mail job attempts by kind (mail_install, alert_mail) and outcome.",
    labelNames: ["kind", "outcome"] as const,
    registers,
  });
  new Gauge({
    name: `${METRIC_PREFIX}alerts_open`,
    help: "Operator alert episodes currently open, read at scrape time.",
    registers,
    async collect() {
      const n = await read(sources.openAlerts);
      if (n === undefined) this.reset();
      else this.set(n);
    },
  });

  // Unknown is no sample, never a 0 that would read as an empty account. Both gauges read the
  // same source; it keeps its reading a while and shares one call between concurrent reads.
  new Gauge({
    name: `${METRIC_PREFIX}reseller_balance`,
    help: "The reseller balance of the bridge's own account (RESELLER_ACCOUNT_ID), read with a 60 s cache; no sample while it is unknown.",
    registers,
    async collect() {
      const b = await read(sources.resellerBalance);
      if (typeof b?.balance === "number") this.set(b.balance);
      else this.remove();
    },
  });
  new Gauge({
    name: `${METRIC_PREFIX}reseller_balance_up`,
    help: "1 when the last read of the reseller balance worked, 0 when it failed (GET /admin/balance says why); no sample before a first read, so none when no account is configured.",
    registers,
    async collect() {
      const b = await read(sources.resellerBalance);
      if (b === undefined || b.checkedAt === null) this.remove();
      else this.set(b.balance === null ? 0 : 1);
    },
  });

  return {
    registry,
    contentType: registry.contentType,
    webhooks: {
      received: (source, type, outcome) => safely(() => webhooksTotal.inc({ source, type, outcome })),
    },
    provisioning: {
      called: (call, module, status) => safely(() => provisioningCalls.inc({ call, module, status: String(status) })),
    },
    jobs: {
      attemptFinished: (job, outcome, durationMs) =>
        safely(() => {
          jobAttempts.inc({ kind: job.kind, outcome });
          jobDuration.observe({ kind: job.kind, outcome }, Math.max(0, durationMs) / 1000);
          if (job.kind === JOB_KINDS.renew && FINAL_OUTCOMES.includes(outcome)) renewals.inc({ outcome });
          if (MAIL_JOB_KINDS.includes(job.kind)) mails.inc({ kind: job.kind, outcome });
        }),
    },
    upstream: {
      callFinished: (report) =>
        safely(() => {
          const provider = report.provider ?? DEFAULT_PROVIDER;
          upstreamCalls.inc({ provider, operation: report.operation, outcome: report.outcome });
          upstreamDuration.observe({ provider, operation: report.operation }, Math.max(0, report.durationMs) / 1000);
        }),
    },
    track(next) {
      sources = { ...next };
    },
    scrape: () => registry.metrics(),
  };
}
