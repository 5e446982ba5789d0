import { randomBytes } from "node:crypto";
import { closeSync, fsync, openSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { mkdir, readdir } from "node:fs/promises";
import { promisify } from "node:util";
import type { ConnectionOptions } from "node:tls";
import { join, resolve } from "node:path";
import nodemailer from "nodemailer";
import type { Logger } from "../log/logger.js";
import { composeMail, type OutgoingMail } from "./mime.js";

export type { OutgoingMail };

export interface SentMail {
  messageId: string;
  /** The SMTP server's final answer, or the outbox file written. */
  response: string;
}

/** Where customer mail goes: an SMTP server or the `.eml` file outbox. */
export interface Mailer {
  /** For logs and status: "smtp mail.example:587", never the credentials. */
  readonly description: string;
  send(mail: OutgoingMail): Promise<SentMail>;
  close(): void;
}

export interface MailTransportConfig {
  /** `smtp://user:pass@host:587` (STARTTLS when offered) or `smtps://...` (implicit TLS); unset: the outbox. */
  SMTP_URL?: string;
  /** Directory of the database; the outbox is `<dataDir>/outbox/`. */
  dataDir: string;
}

export interface CreateMailerOptions {
  logger?: Logger;
  /**
   * TLS options for STARTTLS and smtps (e.g. `ca` for a private CA). Certificates are verified
   * unless this says otherwise. (Default: Node's defaults)
   */
  tls?: ConnectionOptions;
  /** Directory of `.eml` files when there is no SMTP_URL. (Default: `<dataDir>/outbox`) */
  outboxDir?: string;
}

/** Builds the mailer the configuration asks for and logs which one, without secrets. */
export function createMailer(config: MailTransportConfig, options: CreateMailerOptions = {}): Mailer {
  const mailer = config.SMTP_URL
    ? smtpMailer(config.SMTP_URL, options.tls)
    : outboxMailer(options.outboxDir ?? resolve(config.dataDir, "outbox"));
  options.logger?.info({ transport: mailer.description }, "customer mail transport");
  return mailer;
}

export interface SmtpTarget {
  host: string;
  port: number;
  /** Implicit TLS (smtps://); otherwise STARTTLS when the server offers it. */
  secure: boolean;
  auth: { user: string; pass: string } | undefined;
}

/** Reads an `smtp://` or `smtps://` URL; the port defaults to 587 and 465. */
export function parseSmtpUrl(url: string): SmtpTarget {
  const u = new URL(url);
  if (u.protocol !== "smtp:" && u.protocol !== "smtps:") throw new Error("SMTP_URL must be an smtp:// or smtps:// URL");
  const secure = u.protocol === "smtps:";
  const host = u.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = u.port ? Number(u.port) : secure ? 465 : 587;
  const user = decodeURIComponent(u.username);
  const auth = user ? { user, pass: decodeURIComponent(u.password) } : undefined;
  return { host, port, secure, auth };
}

/** "host:port", IPv6 in brackets: what logs may say about the SMTP server. */
export function smtpAddress(target: Pick<SmtpTarget, "host" | "port">): string {
  return `${target.host.includes(":") ? `[${target.host}]` : target.host}:${target.port}`;
}

function smtpMailer(url: string, tls: ConnectionOptions | undefined): Mailer {
  const target = parseSmtpUrl(url);
  const transporter = nodemailer.createTransport({
    // A few kept-open connections: a burst of orders does not open (and greet, and upgrade to
    // TLS, and authenticate) one connection per mail.
    pool: true,
    maxConnections: 3,
    maxMessages: 100,
    host: target.host,
    port: target.port,
    secure: target.secure,
    // Opportunistic STARTTLS: upgrade whenever the server offers it, plain otherwise.
    requireTLS: false,
    ignoreTLS: false,
    auth: target.auth,
    tls,
    // A dead server should fail the attempt quickly and leave the waiting to the job's backoff.
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    logger: false,
  });
  return {
    description: `${target.secure ? "smtps" : "smtp"} ${smtpAddress(target)}${target.auth ? " (with auth)" : ""}`,
    async send(mail) {
      // The message as built once (see compose); the server receives exactly those bytes.
      const info = await transporter.sendMail({ envelope: { from: mail.from, to: [mail.to.address] }, raw: await composeMail(mail) });
      return { messageId: mail.messageId, response: info.response };
    },
    close: () => transporter.close(),
  };
}

function outboxMailer(dir: string): Mailer {
  // Unlike an SMTP server, the outbox can tell whether it already holds a mail, so a resend
  // after a crash (same tag) is a no-op here: one file per mail, exactly. The directory is read
  // once per process; after that this process's own writes keep the index current.
  let written: Promise<Map<string, string>> | undefined;
  const index = () =>
    (written ??= mkdir(dir, { recursive: true })
      .then(() => readdir(dir))
      .then((files) => new Map(files.filter((f) => f.endsWith(".eml")).map((f) => [f.replace(/^\d{8}T\d{9}Z-/, ""), f]))));
  return {
    description: `outbox ${dir}`,
    async send(mail) {
      const name = `${safeTag(mail.tag)}.eml`;
      const files = await index();
      const existing = files.get(name);
      if (existing) return { messageId: mail.messageId, response: `already in ${join(dir, existing)}` };
      const file = join(dir, `${fileStamp(new Date())}-${name}`);
      // An .eml file on disk has unix line ends, as mail programs that open one expect.
      await writeAtomically(file, (await composeMail(mail)).replaceAll("\r\n", "\n"));
      files.set(name, file);
      return { messageId: mail.messageId, response: `written to ${file}` };
    },
    close: () => {},
  };
}

/** "20250131T120000123Z": sorts by time, valid on every file system. */
function fileStamp(d: Date): string {
  return d.toISOString().replace(/[-:.]/g, "");
}

export function safeTag(tag: string): string {
  return tag.replace(/[^A-Za-z0-9_.-]/g, "_").slice(0, 100) || "mail";
}

/**
 * Written to a temporary name, flushed to disk, then renamed: a reader never sees half a
 * message. The open, the write, the close and the rename are synchronous, as SQLite's own
 * writes on this thread are: each is a short call into the page cache, while each call handed to
 * the thread pool cost the event loop far more (the hand-over and the wake-up: about 0.6 ms of
 * the main thread per mail in bench:pipeline's profile, for five such calls). Only the fsync,
 * which waits for the disk, goes to the thread pool.
 */
async function writeAtomically(file: string, data: string): Promise<void> {
  const tmp = `${file}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    const fd = openSync(tmp, "wx", 0o640);
    try {
      writeFileSync(fd, data, "utf8");
      await fsyncFile(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

const fsyncFile = promisify(fsync);
