import { NotFoundError } from "../reseller/errors.js";
import { JobBlockedError, JobFailedError } from "../jobs/errors.js";
import type { JobHandler } from "../jobs/runner.js";
import type { Job } from "../jobs/types.js";
import type { LifecycleDeps } from "../lifecycle/deps.js";
import type { Db } from "../store/database.js";
import { bundleComponents } from "../lifecycle/upstream.js";
import type { Logger } from "../log/logger.js";
import type { ServiceRow } from "../store/services.js";
import { createTemplates, TemplateError, type InstallCommand, type MailTemplates } from "./templates.js";
import type { Mailer } from "./transport.js";
import { licenceTypes, mustGet } from "../lifecycle/targets.js";

export interface InstallMailDeps extends LifecycleDeps {
  mailer: Mailer;
  /** Sender address (MAIL_FROM). */
  from: string;
  /** Directory of `install.txt`, `install.html` and their per-type overrides. */
  templatesDir: string;
  /** Unused by attempts, which log through the job's own logger (it carries job and service ids). */
  logger?: Logger;
}

const PRODUCT_NAMES: Partial<Record<string, string>> = {
  cpanel: "cPanel & WHM",
  litespeed: "LiteSpeed Web Server",
  cloudlinux: "CloudLinux OS",
  imunify360: "Imunify360",
  plesk: "Plesk",
  directadmin: "DirectAdmin",
  virtualizor: "Virtualizor",
  jetbackup: "JetBackup",
  kernelcare: "KernelCare",
  softaculous: "Softaculous",
  sitepad: "SitePad",
  webuzo: "Webuzo",
  whmreseller: "WHMReseller",
  whmsonic: "WHMSonic",
  wp2: "WP Toolkit",
  backuply: "Backuply",
  osm: "OSM",
  cxs: "ConfigServer eXploit Scanner",
  cpguard: "cPGuard",
  dareseller: "DA Reseller",
};

const LITESPEED_VARIANT_NAMES: Partial<Record<string, string>> = {
  litespeed: "2 cores",
  litespeed4: "4 cores",
  litespeed8: "8 cores",
  litespeedX: "XCore",
};

export function productName(type: string, variant?: string | null): string {
  const name = PRODUCT_NAMES[type] ?? type;
  const cores = type === "litespeed" && variant ? LITESPEED_VARIANT_NAMES[variant] : undefined;
  return cores ? `${name} (${cores})` : name;
}

/** The idempotency key of an event's install mail; the register handler enqueues one job per event. */
export function installMailKey(job: Pick<Job, "id" | "eventId" | "serviceId">): string {
  return `install:${job.eventId ?? `job-${job.id}`}`;
}

/** The same on every attempt, so a mail sent twice after a crash is folded together by mail clients. */
export function installMessageId(job: Pick<Job, "id" | "eventId">): string {
  const tag = (job.eventId ?? `job-${job.id}`).replace(/[^A-Za-z0-9_.-]/g, "_");
  return `<install.${tag}@license-bridge>`;
}

/**
 * The `mail_install` job: fetch the licence's install command(s) and mail them to the customer,
 * once per event.
 *
 * Once: the `mails` row is set to 'sending' (with a deterministic Message-ID) before the SMTP
 * conversation and to 'sent' with the history entry after the server accepted. A run that finds
 * 'sent' does nothing. A run that finds 'sending' sends again with the same Message-ID: either
 * the earlier attempt failed, or the process died between the server's "250 OK" and our commit.
 * That residual window cannot be closed (SMTP has no two-phase commit); the same Message-ID makes
 * the rare duplicate one that mail clients deduplicate.
 *
 * Errors: a transient SMTP or upstream failure is rethrown as is, and the runner retries it with
 * backoff; rejected SMTP credentials or a broken template block the job for the operator.
 */
export function installMailHandler(deps: InstallMailDeps): JobHandler {
  const { db, services, clock, mailer } = deps;
  const mails = new MailStore(db);
  const templates: MailTemplates = createTemplates(deps.templatesDir);

  return async (job, ctx) => {
    const log = ctx.logger;
    const svc = mustGet(deps, job);
    const key = installMailKey(job);

    const earlier = mails.get(key);
    if (earlier?.state === "sent") {
      log.info({ mail_key: key, message_id: earlier.message_id }, "install mail was already sent; nothing to do");
      return;
    }
    if (!svc.customer_email) {
      log.info("service has no customer e-mail address; no install mail");
      return;
    }
    if (svc.status === "terminated") {
      services.addHistory({
        service_id: svc.service_id,
        at: clock.now(),
        event_id: job.eventId,
        job_id: job.id,
        action: "install mail skipped",
        detail: "service was terminated before its install mail went out",
      });
      return;
    }

    // Outside any transaction: upstream calls are I/O.
    const commands = await installCommands(deps, svc);
    const rendered = await templates.render("install", templateVariants(svc), {
      customer_name: svc.customer_name ?? "",
      customer_email: svc.customer_email,
      product: serviceProductName(svc),
      ip: svc.ip,
      service_id: svc.service_id,
      commands,
    }).catch((err: unknown) => {
      if (err instanceof TemplateError) throw new JobBlockedError(`${err.message}; fix it and retry the job`);
      throw err;
    });

    const messageId = earlier?.message_id ?? installMessageId(job);
    if (earlier) {
      log.warn(
        { mail_key: key, message_id: messageId, previous_error: earlier.last_error },
        earlier.last_error
          ? "sending the install mail again after a failed attempt, with the same Message-ID"
          : "an earlier attempt may have been accepted before a crash; sending again with the same Message-ID",
      );
    }
    mails.begin({
      mail_key: key,
      kind: "install",
      event_id: job.eventId,
      job_id: job.id,
      service_id: svc.service_id,
      to_address: svc.customer_email,
      subject: rendered.subject,
      message_id: messageId,
      now: clock.now(),
    });

    let response: string;
    try {
      ({ response } = await mailer.send({
        from: deps.from,
        to: { name: svc.customer_name ?? undefined, address: svc.customer_email },
        subject: rendered.subject,
        text: rendered.text,
        html: rendered.html,
        messageId,
        tag: job.eventId ?? `job-${job.id}`,
      }));
    } catch (err) {
      const judged = judgeSendError(err);
      mails.attemptFailed(key, judged.message);
      throw judged;
    }

    db.transaction(() => {
      mails.markSent(key, clock.now());
      services.addHistory({
        service_id: svc.service_id,
        at: clock.now(),
        event_id: job.eventId,
        job_id: job.id,
        action: "install mail sent",
        detail: `install mail sent to ${svc.customer_email} (Message-ID ${messageId})`,
      });
    })();
    log.info(
      { mail_key: key, message_id: messageId, transport: mailer.description, templates: rendered.files, response },
      "install mail sent",
    );
  };
}

/** One install command per licence; a bundle's components each have their own. */
async function installCommands(deps: LifecycleDeps, svc: ServiceRow): Promise<InstallCommand[]> {
  const types = licenceTypes(svc);
  if (types.length === 0) throw new JobFailedError(`bundle "${svc.bundle}" names no licence type the bridge knows`);
  const out: InstallCommand[] = [];
  for (const type of types) {
    let command: string;
    try {
      command = (await deps.upstream.installCommand(svc.ip, type)).trim();
    } catch (err) {
      // The mail runs beside the service's own queue: an IP change may have moved the licence
      // since this job read the row. Then it is no failure; the next attempt reads the new IP.
      if (err instanceof NotFoundError && deps.services.get(svc.service_id)?.ip !== svc.ip) {
        throw new Error(`the licence moved from ${svc.ip} while the install mail was prepared; retrying with its new IP`);
      }
      throw err;
    }
    if (!command) throw new Error(`the reseller returned an empty install command for ${type} at ${svc.ip}`);
    out.push({ label: productName(type, svc.kind === "licence" ? svc.variant : null), command });
  }
  return out;
}

function serviceProductName(svc: ServiceRow): string {
  if (svc.kind === "bundle") return bundleComponents(svc.bundle ?? "").map((t) => productName(t)).join(" + ") || (svc.bundle ?? "bundle");
  return productName(svc.type ?? "licence", svc.variant);
}

/** Override lookup order: the product type; for a bundle its id (e.g. "cpanel-cloudlinux"), then "bundle". */
function templateVariants(svc: ServiceRow): string[] {
  if (svc.kind === "bundle") return [svc.bundle ?? "", "bundle"].filter(Boolean);
  return svc.type ? [svc.type] : [];
}

interface SmtpErrorLike {
  code?: string;
  responseCode?: number;
  message?: string;
}

/**
 * What a failed send means. Rejected credentials need the operator (blocked); everything else
 * (refused connection, timeout, 4xx, TLS trouble) is retried with backoff. A permanent 5xx
 * refusal of the recipient is retried too, but the job's last_error shows it in the admin API.
 */
function judgeSendError(err: unknown): Error {
  const e = (err ?? {}) as SmtpErrorLike;
  const message = `mail not sent: ${e.message ?? String(err)}`;
  if (e.code === "EAUTH") return new JobBlockedError(`${message} (the SMTP server refused the credentials in SMTP_URL; fix them and retry the job)`);
  return new Error(message);
}

export interface MailRow {
  id: number;
  mail_key: string;
  kind: string;
  event_id: string | null;
  job_id: number;
  service_id: string;
  to_address: string;
  subject: string;
  message_id: string;
  state: "sending" | "sent";
  attempts: number;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
}

/** The `mails` table (migrations/002_mail.sql). Synchronous, like every store. */
export class MailStore {
  private readonly s;

  constructor(db: Db) {
    this.s = {
      get: db.prepare("SELECT * FROM mails WHERE mail_key = ?"),
      // A row already 'sent' is never taken back to 'sending'; the Message-ID of the first attempt stays.
      begin: db.prepare(
        `INSERT INTO mails (mail_key, kind, event_id, job_id, service_id, to_address, subject, message_id, state, attempts, created_at)
         VALUES (@mail_key, @kind, @event_id, @job_id, @service_id, @to_address, @subject, @message_id, 'sending', 1, @now)
         ON CONFLICT (mail_key) DO UPDATE SET attempts = attempts + 1, last_error = NULL,
           to_address = excluded.to_address, subject = excluded.subject
         WHERE state = 'sending'`,
      ),
      failed: db.prepare("UPDATE mails SET last_error = ? WHERE mail_key = ? AND state = 'sending'"),
      sent: db.prepare("UPDATE mails SET state = 'sent', sent_at = ?, last_error = NULL WHERE mail_key = ?"),
    };
  }

  get(key: string): MailRow | undefined {
    return this.s.get.get(key) as MailRow | undefined;
  }


  /** Records, before the SMTP conversation, that the mail is being sent. */
  begin(row: Pick<MailRow, "mail_key" | "kind" | "event_id" | "job_id" | "service_id" | "to_address" | "subject" | "message_id"> & { now: number }): void {
    this.s.begin.run(row);
  }

  attemptFailed(key: string, error: string): void {
    this.s.failed.run(error, key);
  }

  markSent(key: string, now: number): void {
    this.s.sent.run(now, key);
  }
}
