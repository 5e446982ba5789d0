import type { ConnectionOptions } from "node:tls";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";
import { systemClock } from "../../src/clock.js";
import { defineJob, type JobDefinition } from "../../src/jobs/define.js";
import { silentLogger, type Logger } from "../../src/log/logger.js";
import { mailJobs } from "../../src/mail/index.js";
import { startTestBridge, type TestBridge, type TestSandbox } from "./bridge.js";
import { INSTALL_MAIL } from "../../src/intake/jobs.js";
import { DEFAULT_SANDBOX_TOKENS } from "../../src/vocabulary/sandbox-identity.js";

/** One message as the SMTP server received it. */
export interface ReceivedMail {
  /** The whole message as sent in DATA (headers and MIME body). */
  raw: string;
  envelope: { from: string; to: string[] };
  /** The connection had been upgraded with STARTTLS (or was TLS from the start). */
  secure: boolean;
  /** The authenticated user, if any. */
  user: string | undefined;
}

export interface TestSmtpOptions {
  /** Require AUTH with these credentials (authOptional false); otherwise no auth at all. */
  auth?: { user: string; pass: string };
  /** Offer STARTTLS (smtp-server's built-in self-signed certificate). (Default: with auth only) */
  starttls?: boolean;
}

export interface TestSmtp {
  readonly host: string;
  readonly port: number;
  /** `smtp://user:pass@127.0.0.1:<port>` for SMTP_URL. */
  readonly url: string;
  /** Every message received, across restarts. */
  readonly messages: ReceivedMail[];
  /** Failed AUTH attempts. */
  readonly authFailures: number;
  /** Stops listening (an outage); messages are kept. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** A real SMTP server on 127.0.0.1, port 0, that keeps what it receives. */
export async function startTestSmtp(options: TestSmtpOptions = {}): Promise<TestSmtp> {
  const host = "127.0.0.1";
  const messages: ReceivedMail[] = [];
  let authFailures = 0;
  let port = 0;
  let server: SMTPServer | undefined;
  const starttls = options.starttls ?? Boolean(options.auth);

  const serverOptions: SMTPServerOptions = {
    logger: false,
    closeTimeout: 200,
    disabledCommands: [...(starttls ? [] : ["STARTTLS"]), ...(options.auth ? [] : ["AUTH"])],
    authOptional: !options.auth,
    onAuth(auth, _session, callback) {
      const want = options.auth;
      if (want && auth.username === want.user && auth.password === want.pass) return callback(null, { user: auth.username });
      authFailures++;
      return callback(new Error("Invalid username or password"));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        messages.push({
          raw: Buffer.concat(chunks).toString("utf8"),
          envelope: {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            to: session.envelope.rcptTo.map((r) => r.address),
          },
          secure: session.secure,
          user: typeof session.user === "string" ? session.user : undefined,
        });
        callback();
      });
    },
  };

  const start = () =>
    new Promise<void>((ok, fail) => {
      const s = new SMTPServer(serverOptions);
      s.on("error", () => {});
      const net = s.listen(port, host, () => {
        const address = net.address();
        if (address && typeof address === "object") port = address.port;
        server = s;
        ok();
      });
      net.once("error", fail);
    });

  const stop = () =>
    new Promise<void>((ok) => {
      const s = server;
      server = undefined;
      if (!s) return ok();
      s.close(() => ok());
    });

  await start();
  const credentials = options.auth ? `${encodeURIComponent(options.auth.user)}:${encodeURIComponent(options.auth.pass)}@` : "";
  return {
    host,
    get port() {
      return port;
    },
    get url() {
      return `smtp://${credentials}${host}:${port}`;
    },
    messages,
    get authFailures() {
      return authFailures;
    },
    stop,
    start,
    close: stop,
  };
}

/** A header of a raw message, unfolded; undefined when absent. */
export function header(raw: string, name: string): string | undefined {
  const head = raw.split(/\r?\n\r?\n/, 1)[0] ?? "";
  const unfolded = head.replace(/\r?\n[ \t]+/g, " ");
  const re = new RegExp(`^${name}:[ \\t]*(.*)$`, "im");
  return re.exec(unfolded)?.[1]?.trim();
}

/** The decoded text and HTML bodies of a raw message (multipart or not; quoted-printable and base64). */
export function mimeParts(raw: string): { text?: string; html?: string } {
  const out: { text?: string; html?: string } = {};
  const walk = (entity: string) => {
    const split = /\r?\n\r?\n/.exec(entity);
    const head = split ? entity.slice(0, split.index) : entity;
    const body = split ? entity.slice(split.index + split[0].length) : "";
    const type = (header(head + "\n\n", "Content-Type") ?? "text/plain").toLowerCase();
    const boundary = /boundary="?([^";]+)"?/i.exec(header(head + "\n\n", "Content-Type") ?? "")?.[1];
    if (type.startsWith("multipart/") && boundary) {
      const sections = body.split(`--${boundary}`).slice(1);
      for (const section of sections) {
        if (section.startsWith("--")) break;
        walk(section.replace(/^\r?\n/, ""));
      }
      return;
    }
    const encoding = (header(head + "\n\n", "Content-Transfer-Encoding") ?? "7bit").toLowerCase();
    const decoded = encoding === "base64" ? Buffer.from(body, "base64").toString("utf8") : encoding === "quoted-printable" ? decodeQp(body) : body;
    if (type.startsWith("text/html")) out.html ??= decoded;
    else if (type.startsWith("text/plain")) out.text ??= decoded;
  };
  walk(raw);
  return out;
}

function decodeQp(s: string): string {
  const soft = s.replace(/=\r?\n/g, "");
  const bytes: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    const c = soft[i]!;
    if (c === "=" && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
      bytes.push(parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(c, "utf8"));
    }
  }
  return Buffer.from(bytes).toString("utf8").replace(/\r\n/g, "\n");
}

/** Reverses the HTML escaping of mail templates, to compare an HTML part with plain values. */
export function unescapeHtml(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|#39);/g, (_m, e: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" })[e]!);
}

/**
 * A bridge whose `mail_install` jobs are handled by the real mail job, built from the bridge's
 * own store and upstream (the job definitions are read when the service starts, so it starts
 * with a stand-in that delegates to the definition built just after).
 */
export async function startMailBridge(
  sb: TestSandbox,
  options: {
    env?: Record<string, string>;
    tls?: ConnectionOptions;
    logger?: Logger;
    templatesDir?: string;
    /**
     * While `armed`, the next mail job dies once its mail was accepted, before anything of it is
     * recorded (as a crash would): its attempt ends in an error and the mail row stays 'sending'.
     */
    crashAfterSend?: { armed: boolean };
  } = {},
): Promise<TestBridge> {
  const late: { job?: JobDefinition } = {};
  const bridge = await startTestBridge(sb, {
    env: { RETRY_MAX_DELAY_SECONDS: "1", ...options.env },
    logger: options.logger,
    jobs: [
      defineJob(INSTALL_MAIL, async (job, ctx) => {
        if (!late.job) throw new Error("mail handler not ready");
        const change = await late.job.handler(job, ctx);
        if (options.crashAfterSend?.armed && change) {
          options.crashAfterSend.armed = false;
          throw new Error("staged crash: the server accepted the mail, the bridge recorded nothing");
        }
        return change;
      }),
    ],
  });
  const { upstream } = bridge.service;
  const store = bridge.service.store;
  late.job = mailJobs(
    bridge.config,
    { store, upstream, catalog: bridge.config.catalog, clock: systemClock, settleMs: 0 },
    options.logger ?? silentLogger(),
    { tls: options.tls, templatesDir: options.templatesDir },
  ).find((d) => d.kind === INSTALL_MAIL.kind);
  return bridge;
}

/** The install command as the sandbox gives it, asked independently of the bridge. */
export async function sandboxInstallCommand(sb: TestSandbox, ip: string, type: string): Promise<string> {
  const res = await fetch(`${sb.running.apiUrl}/license/install-command?${new URLSearchParams({ ip, type })}`, {
    headers: { authorization: `Bearer ${DEFAULT_SANDBOX_TOKENS.reseller}` },
  });
  const body = (await res.json()) as { command?: string; data?: { command?: string } };
  const command = body.data?.command ?? body.command;
  if (!res.ok || !command) throw new Error(`sandbox gave no install command for ${type} at ${ip}: ${res.status}`);
  return command;
}
