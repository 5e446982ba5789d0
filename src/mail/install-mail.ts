import { NotFoundError } from "../reseller/errors.js";
import { defineJob } from "../jobs/define.js";
import { JobBlockedError, JobFailedError, JobRetryError } from "../jobs/errors.js";
import type { Job } from "../vocabulary/jobs.js";
import type { LifecycleDeps } from "../lifecycle/deps.js";
import { bundleComponents } from "../reseller/upstream.js";
import type { Logger } from "../log/logger.js";
import type { ServiceRow } from "../store/store.js";
import { createTemplates, TemplateError, type InstallCommand, type MailTemplates } from "./templates.js";
import type { Mailer } from "./transport.js";
import { installCommandsOf } from "../lifecycle/install-commands.js";
import { jobChange, licenseTypes, mustGet } from "../lifecycle/service-changes.js";
import { INSTALL_MAIL } from "../intake/jobs.js";
import { checkInstallMail } from "../intake/charge-rule.js";


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
 * conversation and to 'sent', with the history entry, after the server accepted, in the
 * transaction that records the job's success. A run that finds
 * 'sent' does nothing. A run that finds 'sending' sends again with the same Message-ID: either
 * the earlier attempt failed, or the process died between the server's "250 OK" and our commit.
 * That residual window cannot be closed (SMTP has no two-phase commit); the same Message-ID makes
 * the rare duplicate one that mail clients deduplicate.
 *
 * Errors: a transient SMTP or upstream failure is rethrown as is, and the runner retries it with
 * backoff; rejected SMTP credentials or a broken template block the job for the operator.
 */
export function installMailJob(deps: InstallMailDeps) {
  const { store, mailer } = deps;
  const mails = store.mails;
  const templates: MailTemplates = createTemplates(deps.templatesDir);

  return defineJob(INSTALL_MAIL, async (job, ctx) => {
    const log = ctx.logger;
    const svc = await mustGet(deps, job);
    const key = installMailKey(job);

    const earlier = await mails.get(key);
    if (earlier?.state === "sent") {
      log.info({ mail_key: key, message_id: earlier.message_id }, "install mail was already sent; nothing to do");
      return;
    }
    if (!svc.customer_email) {
      log.info("service has no customer e-mail address; no install mail");
      return;
    }
    const skipped = (why: string) =>
      store.services.change(jobChange(job, svc.service_id, { history: [{ action: "install mail skipped", detail: `${why} before its install mail went out; no mail sent` }] }));
    if (svc.status === "terminated") return void (await skipped("the service was terminated"));

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

    // Last, right before the mail is recorded and sent: a termination accepted while the
    // commands were read (or while the order's answer was settled) still stops it.
    const refusal = await checkInstallMail(deps, svc.service_id);
    if (refusal) {
      log.info({ mail_key: key, reason: refusal }, "install mail not sent");
      return void (await skipped(refusal));
    }

    const messageId = earlier?.message_id ?? installMessageId(job);
    if (earlier) {
      log.warn(
        { mail_key: key, message_id: messageId, previous_error: earlier.last_error },
        earlier.last_error
          ? "sending the install mail again after a failed attempt, with the same Message-ID"
          : "an earlier attempt may have been accepted before a crash; sending again with the same Message-ID",
      );
    }
    await mails.begin({
      mail_key: key,
      kind: "install",
      event_id: job.eventId,
      job_id: job.id,
      service_id: svc.service_id,
      to_address: svc.customer_email,
      subject: rendered.subject,
      message_id: messageId,
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
      await mails.failed(key, judged.message);
      throw judged;
    }

    log.info(
      { mail_key: key, message_id: messageId, transport: mailer.description, templates: rendered.files, response },
      "install mail sent",
    );
    // Recorded with the job's ending, in one transaction.
    return {
      ...jobChange(job, svc.service_id, { history: [{ action: "install mail sent", detail: `install mail sent to ${svc.customer_email} (Message-ID ${messageId})` }] }),
      mailSent: key,
    };
  });
}

/** One install command per licence; a bundle's components each have their own. */
async function installCommands(deps: LifecycleDeps, svc: ServiceRow): Promise<InstallCommand[]> {
  if (licenseTypes(svc).length === 0) throw new JobFailedError(`bundle "${svc.bundle}" names no licence type the bridge knows`);
  try {
    const commands = await installCommandsOf(deps.providers, svc);
    return commands.map(({ type, command }) => ({ label: productName(type, svc.kind === "licence" ? svc.variant : null), command }));
  } catch (err) {
    // The mail runs beside the service's own queue: an IP change may have moved the licence
    // since this job read the row. Then it is no failure; the next attempt reads the new IP.
    if (err instanceof NotFoundError && (await deps.store.services.get(svc.service_id))?.ip !== svc.ip) {
      throw new Error(`the licence moved from ${svc.ip} while the install mail was prepared; retrying with its new IP`);
    }
    throw err;
  }
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
  return new JobRetryError(message, "job_failed", { cause: err });
}
