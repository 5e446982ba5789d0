import { describe, expect, it } from "vitest";
import { composeMail, mailTree, writeTree } from "../../src/mail/mime.js";
import type { OutgoingMail } from "../../src/mail/index.js";

const base: OutgoingMail = {
  from: "Hosting Example <licenses@host.example>",
  to: { name: "Ann Example", address: "ann@example.com" },
  subject: "Your cPanel & WHM licence for 203.0.113.5 is ready",
  text: "Hello Ann,\n\nrun:\n\n    bash <( curl https://licensing.example/install.sh ) --key ABCDEF\n",
  html: '<p>Hello Ann,</p>\n<pre><code>bash &lt;( curl https://licensing.example/install.sh )</code></pre>\n<p style="color: #222;">=</p>',
  messageId: "<install.evt_1@license-bridge>",
  tag: "evt_1",
};

/** Mails that take each of nodemailer's paths: plain 7-bit text, soft line breaks, encoded words, no name, no trailing newline. */
const MAILS: Record<string, OutgoingMail> = {
  "an install mail": base,
  "short 7-bit lines only": { ...base, text: "short\nlines\n", html: "<p>short</p>\n" },
  "lines past 76 characters": { ...base, text: `${"word ".repeat(40)}\n${"x".repeat(200)}`, html: `<p>${"lang ".repeat(60)}</p>` },
  "non-Latin name, subject and body": {
    ...base,
    to: { name: "Jürgen Müller-Łukasiewicz 日本", address: "jm@example.com" },
    subject: "Ihre Lizenz für 203.0.113.5 – bereit ✓",
    text: "Grüße,\r\nÄÖÜ ß €\r\n\r\n    bash install.sh\r\n",
    html: "<p>Grüße — ✓ 日本語</p>",
  },
  "no recipient name, empty text": { ...base, to: { address: "ann@example.com" }, text: "", html: "<p>only html</p>" },
};

describe("the MIME message, written without nodemailer's streams", () => {
  it.each(Object.keys(MAILS))("%s: the same bytes as nodemailer's own writer", async (name) => {
    const tree = mailTree(MAILS[name]!);
    const ours = writeTree(tree);
    expect(ours).toBeDefined();
    expect(ours).toBe((await tree.build()).toString("utf8"));
  });

  it("leaves a tree it does not write (base64 parts) to nodemailer, with the same result", async () => {
    const tree = mailTree(MAILS["non-Latin name, subject and body"]!, { textEncoding: "base64" });
    expect(writeTree(tree)).toBeUndefined();
    const built = (await tree.build()).toString("utf8");
    expect(built).toMatch(/Content-Transfer-Encoding: base64/);
  });

  it("composes a whole message: headers once, both alternatives, a closing boundary and a final line break", async () => {
    const text = await composeMail(base);
    expect(text.match(/^Message-ID: <install\.evt_1@license-bridge>$/gm)).toHaveLength(1);
    expect(text).toMatch(/^Content-Type: multipart\/alternative;/m);
    expect(text).toMatch(/Content-Type: text\/plain; charset=utf-8\r\n/);
    expect(text).toMatch(/Content-Type: text\/html; charset=utf-8\r\n/);
    const boundary = /boundary="([^"]+)"/.exec(text)![1]!;
    expect(text.endsWith(`\r\n--${boundary}--\r\n`)).toBe(true);
  });
});

describe("the recipient's display name", () => {
  const toHeader = async (name: string) => /^To: (.*)$/m.exec(await composeMail({ ...base, to: { name, address: "ann@example.com" } }))![1];

  it.each([
    ["Ann \u202Eelpmaxe", "Ann elpmaxe"],
    ["Ann\u2066 Example\u2069", "Ann Example"],
    ["Ann \u200FExample", "Ann Example"],
    ["Ann\u0007 Example", "Ann Example"],
  ])("%j reaches the To header as %j: without its bidirectional, format or control characters", async (name, shown) => {
    expect(await toHeader(name)).toBe(await toHeader(shown));
  });

  it("keeps the joiners a name needs to be written", async () => {
    const persian = "\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645";
    expect(await toHeader(persian)).not.toBe(await toHeader(persian.replace("\u200C", "")));
  });

  it("a name of nothing but controls leaves the address alone", async () => {
    expect(await toHeader("\u202E\u2066")).toBe("ann@example.com");
  });
});
