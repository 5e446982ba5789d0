import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { JobDefinition } from "../jobs/define.js";
import type { LifecycleDeps } from "../lifecycle/deps.js";
import type { Logger } from "../log/logger.js";
import { resellerRegistry } from "../providers/registry.js";
import type { Upstream } from "../reseller/upstream.js";
import { installMailJob } from "./install-mail.js";
import { createMailer, type CreateMailerOptions, type Mailer, type MailTransportConfig } from "./transport.js";

export { installMailJob, installMailKey, installMessageId, productName, type InstallMailDeps } from "./install-mail.js";
export { createTemplates, escapeHtml, PLACEHOLDERS, TemplateError, type InstallCommand, type InstallMailValues, type MailTemplates, type RenderedMail } from "./templates.js";
export { createMailer, parseSmtpUrl, smtpAddress, type Mailer, type OutgoingMail, type SentMail } from "./transport.js";

/** The templates shipped with the code: `config/mail/` at the package root. */
export const SHIPPED_TEMPLATES_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../config/mail");

/**
 * `config/mail/` of the working directory when it has the default templates (the operator's
 * copy, like `config/products.json`), else the templates shipped with the code.
 */
export function defaultTemplatesDir(cwd = process.cwd()): string {
  const local = resolve(cwd, "config/mail");
  return existsSync(join(local, "install.txt")) ? local : SHIPPED_TEMPLATES_DIR;
}

export interface MailConfig extends MailTransportConfig {
  MAIL_FROM: string;
  /** Where `config/mail/` is looked for (the configuration's base directory). (Default: the working directory) */
  baseDir?: string;
}

export interface MailHandlersOptions extends Pick<CreateMailerOptions, "tls" | "outboxDir"> {
  /** A ready mailer instead of one built from config. */
  mailer?: Mailer;
  /** (Default: `defaultTemplatesDir()`) */
  templatesDir?: string;
}

/**
 * What the mail jobs read: the lifecycle's deps, or the same with the reseller's upstream in
 * place of the providers (a caller from before the provider port: the reseller alone sells).
 */
export type MailDeps = LifecycleDeps | (Omit<LifecycleDeps, "providers"> & { upstream: Upstream });

/** The job definitions of customer mail, beside the lifecycle's in the runner. */
export function mailJobs(
  config: MailConfig,
  mailDeps: MailDeps,
  logger: Logger,
  options: MailHandlersOptions = {},
): JobDefinition[] {
  const deps: LifecycleDeps =
    "providers" in mailDeps ? mailDeps : { store: mailDeps.store, catalog: mailDeps.catalog, clock: mailDeps.clock, settleMs: mailDeps.settleMs, providers: resellerRegistry(mailDeps.upstream) };
  const log = logger.child({ component: "mail" });
  const mailer = options.mailer ?? createMailer(config, { logger: log, tls: options.tls, outboxDir: options.outboxDir });
  const templatesDir = options.templatesDir ?? defaultTemplatesDir(config.baseDir);
  for (const file of ["install.txt", "install.html"]) {
    if (!existsSync(join(templatesDir, file))) {
      log.warn({ file: join(templatesDir, file) }, "default mail template missing; install mails will be blocked until it exists");
    }
  }
  return [installMailJob({ ...deps, mailer, from: config.MAIL_FROM, templatesDir, logger: log }) ];
}
