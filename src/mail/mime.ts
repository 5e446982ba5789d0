import MailComposer from "nodemailer/lib/mail-composer/index.js";
import type MimeNode from "nodemailer/lib/mime-node/index.js";
import { encode as qpEncode, wrap as qpWrap } from "nodemailer/lib/qp/index.js";
import { withoutControls } from "../vocabulary/text.js";

/** One message, fully rendered. */
export interface OutgoingMail {
  from: string;
  to: { name?: string; address: string };
  subject: string;
  text: string;
  html: string;
  /** The Message-ID header, angle brackets included; the same on every attempt of one mail. */
  messageId: string;
  /** A short, file-name-safe tag of the mail (its event id); names the outbox file. */
  tag: string;
}

/** What nodemailer's quoted-printable encoder wraps lines at (its default). */
const QP_LINE_LENGTH = 76;

/**
 * The message, MIME-encoded once by nodemailer's composer: what the SMTP server or the outbox
 * file receives, without the mailer's plugin pipeline (data-URI images, DKIM, streaming
 * transforms) that none of our mails uses.
 *
 * nodemailer writes the tree out through a chain of streams (a PassThrough and a QP encoder per
 * part, a setImmediate between parts): for a 3 KB mail that machinery cost more than the rest
 * of the mail job. Our parts are strings, so the same bytes are written here in one synchronous
 * pass with nodemailer's own headers, boundaries and QP functions; a tree this does not cover
 * (a stream, a file, base64, a transform) is left to nodemailer's writer.
 */
export async function composeMail(mail: OutgoingMail): Promise<string> {
  const root = mailTree(mail);
  return writeTree(root) ?? (await root.build()).toString("utf8");
}

/** nodemailer's MIME tree of the mail (its boundaries drawn at random, once). */
export function mailTree(mail: OutgoingMail, options: { textEncoding?: "quoted-printable" | "base64" } = {}): MimeNode {
  const name = displayName(mail.to.name);
  return new MailComposer({

    from: mail.from,
    to: name ? { name, address: mail.to.address } : mail.to.address,
    subject: mail.subject,
    text: mail.text,
    html: mail.html,
    messageId: mail.messageId,
    // What nodemailer would pick for our mostly-Latin templates anyway, named here so it does not
    // count every letter of each body (two regex matches over the whole HTML) to decide.
    textEncoding: options.textEncoding ?? "quoted-printable",
  }).compile();
}

/**
 * The recipient's name as its header shows it: no control character and no bidirectional or
 * other invisible format control (U+202E would make the name read as another). The intake
 * refuses such names; this keeps them out of headers for a row written before it did.
 */
function displayName(name: string | undefined): string | undefined {
  const shown = name === undefined ? "" : withoutControls(name).trim();
  return shown === "" ? undefined : shown;
}

/** The parts of a MimeNode its writer reads and its types leave out. */
interface NodeInternals {
  _raw?: unknown;
  _transforms: unknown[];
  _processFuncs: unknown[];
  newline?: unknown;
  multipart?: unknown;
}

/**
 * What `root.build()` gives, as a string, written synchronously; undefined when the tree holds
 * anything but string or Buffer parts in quoted-printable or as they are (checked before any
 * header is built, so nodemailer's writer then starts from an untouched tree).
 */
export function writeTree(root: MimeNode): string | undefined {
  const r = root as unknown as NodeInternals;
  if (r._transforms.length > 0 || r._processFuncs.length > 0 || r.newline) return undefined;
  if (!plain(root)) return undefined;
  const out: string[] = [];
  writeNode(root, out);
  const text = out.join("");
  // nodemailer's LastNewline: the message ends with a line break.
  return text.endsWith("\n") ? text : text.endsWith("\r") ? `${text}\n` : `${text}\r\n`;
}

function plain(node: MimeNode): boolean {
  if ((node as unknown as NodeInternals)._raw) return false;
  const content = node.content;
  if (content) {
    const encoding = node.getTransferEncoding();
    // A string is written as its UTF-8 bytes, a Buffer only through the encoder (its bytes may be no text).
    if (typeof content === "string" ? encoding === "base64" : !Buffer.isBuffer(content) || encoding !== "quoted-printable") return false;
  }
  return node.childNodes.every(plain);
}

/** MimeNode.stream, for a plain tree: headers, the content, then the child parts between boundaries. */
function writeNode(node: MimeNode, out: string[]): void {
  out.push(`${node.buildHeaders()}\r\n\r\n`);
  const content = node.content as string | Buffer | undefined;
  if (content) {
    if (node.getTransferEncoding() === "quoted-printable") {
      const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content;
      if (bytes.length > 0) out.push(qpWrap(qpEncode(bytes), QP_LINE_LENGTH));
    } else {
      out.push(content as string);
    }
  }
  if (!(node as unknown as NodeInternals).multipart) return;
  node.childNodes.forEach((child, i) => {
    out.push(`${i > 0 ? "\r\n" : ""}--${String(node.boundary)}\r\n`);
    writeNode(child, out);
  });
  out.push(`\r\n--${String(node.boundary)}--\r\n`);
}
