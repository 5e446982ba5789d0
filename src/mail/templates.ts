import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";

/**
 * Mail templates are plain files an operator edits: `<name>.txt` and `<name>.html` as the
 * defaults, `<name>.<variant>.txt|html` to override them (one product type, or a bundle).
 *
 * The syntax is only `{{placeholder}}`. In HTML every value is escaped; the one block
 * placeholder, `{{install_commands}}`, is built here from escaped parts. An unknown
 * placeholder is an error, so a typo never reaches a customer. The text template may start
 * with a `Subject: ...` line, which becomes the subject.
 */

export type MailFormat = "txt" | "html";

export interface InstallCommand {
  /** What the command installs, e.g. "cPanel & WHM". */
  label: string;
  command: string;
}

/** What an install mail can say. */
export interface InstallMailValues {
  customer_name: string;
  customer_email: string;
  /** Human product name, e.g. "LiteSpeed Web Server (4 cores)". */
  product: string;
  ip: string;
  service_id: string;
  /** One per licence; a bundle has one per component. */
  commands: InstallCommand[];
}

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
  /** The files used, for logs. */
  files: { text: string; html: string };
}

/** A missing default template or a placeholder the renderer does not know: the operator must fix a file. */
export class TemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TemplateError";
  }
}

export const PLACEHOLDERS = [
  "customer_name",
  "customer_email",
  "product",
  "ip",
  "service_id",
  "install_command",
  "install_commands",
] as const;
type Placeholder = (typeof PLACEHOLDERS)[number];

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;
const DEFAULT_SUBJECT = "Your {{product}} licence for {{ip}}: install command";

const HTML_ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ENTITIES[c]!);
}

interface Cached {
  mtimeMs: number;
  size: number;
  text: string;
}

export interface MailTemplates {
  readonly dir: string;
  /**
   * Renders `<name>` for the first of `variants` that has an override (each format on its
   * own), else the default.
   */
  render(name: string, variants: string[], values: InstallMailValues): Promise<RenderedMail>;
}

/**
 * Templates under `dir`. Reads are cached and re-read only when a file's size or mtime
 * changes, so an operator's edit applies to the mails after it without a restart. A file is
 * looked at (stat) at most once per `recheckMs`, so a burst of mails does not stat every
 * candidate file for every mail.
 */
export function createTemplates(dir: string, recheckMs = 1000): MailTemplates {
  const cache = new Map<string, Cached>();
  const checked = new Map<string, { at: number; text: string | undefined }>();

  async function load(file: string): Promise<string | undefined> {
    const path = join(dir, file);
    const recent = checked.get(path);
    if (recent && Date.now() - recent.at < recheckMs) return recent.text;
    const text = await loadFresh(path);
    checked.set(path, { at: Date.now(), text });
    return text;
  }

  async function loadFresh(path: string): Promise<string | undefined> {
    let st;
    try {
      st = await stat(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") {
        cache.delete(path);
        return undefined;
      }
      throw err;
    }
    const hit = cache.get(path);
    if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit.text;
    const text = await readFile(path, "utf8");
    cache.set(path, { mtimeMs: st.mtimeMs, size: st.size, text });
    return text;
  }

  async function pick(name: string, variants: string[], format: MailFormat): Promise<{ file: string; source: string }> {
    const candidates = [...variants.filter((v) => /^[A-Za-z0-9_-]+$/.test(v)).map((v) => `${name}.${v}.${format}`), `${name}.${format}`];
    for (const file of candidates) {
      const source = await load(file);
      if (source !== undefined) return { file, source };
    }
    throw new TemplateError(`mail template ${join(dir, `${name}.${format}`)} is missing`);
  }

  return {
    dir,
    async render(name, variants, values) {
      const [txt, html] = await Promise.all([pick(name, variants, "txt"), pick(name, variants, "html")]);
      const { subjectLine, body } = splitSubject(txt.source);
      const subject = fill(subjectLine ?? DEFAULT_SUBJECT, values, "subject", txt.file)
        .replace(/\s+/g, " ")
        .trim();
      return {
        subject,
        text: fill(body, values, "txt", txt.file),
        html: fill(html.source, values, "html", html.file),
        files: { text: txt.file, html: html.file },
      };
    },
  };
}

function splitSubject(source: string): { subjectLine: string | undefined; body: string } {
  const m = /^Subject:[ \t]*(.*)\r?\n(?:\r?\n)?/i.exec(source);
  return m ? { subjectLine: m[1]!, body: source.slice(m[0].length) } : { subjectLine: undefined, body: source };
}

type FillFormat = MailFormat | "subject";

function fill(template: string, values: InstallMailValues, format: FillFormat, file: string): string {
  return template.replace(PLACEHOLDER, (match, key: string, offset: number) => {
    if (!(PLACEHOLDERS as readonly string[]).includes(key)) {
      throw new TemplateError(
        `mail template ${file} uses the unknown placeholder ${match}; known: ${PLACEHOLDERS.map((p) => `{{${p}}}`).join(", ")}`,
      );
    }
    const value = valueOf(key as Placeholder, values, format);
    if (format !== "txt") return value;
    // Text: a multi-line value keeps the indentation of the line it starts on (a copyable block).
    const lineStart = template.lastIndexOf("\n", offset - 1) + 1;
    const prefix = template.slice(lineStart, offset);
    return /^[ \t]+$/.test(prefix) ? value.split("\n").join(`\n${prefix}`) : value;
  });
}

function valueOf(key: Placeholder, v: InstallMailValues, format: FillFormat): string {
  const esc = format === "html" ? escapeHtml : (s: string) => s;
  switch (key) {
    case "install_command":
      return esc(v.commands.map((c) => c.command).join("\n"));
    case "install_commands":
      return commandsBlock(v.commands, format);
    default:
      return esc(v[key]);
  }
}

/** One copyable block per licence; labelled when there are several (a bundle). */
function commandsBlock(commands: InstallCommand[], format: FillFormat): string {
  if (format === "html") {
    return commands
      .map((c) => `${commands.length > 1 ? `<p><strong>${escapeHtml(c.label)}</strong></p>\n` : ""}<pre><code>${escapeHtml(c.command)}</code></pre>`)
      .join("\n");
  }
  if (format === "subject") return commands.map((c) => c.label).join(", ");
  return commands.map((c) => `${commands.length > 1 ? `${c.label}:\n\n` : ""}    ${c.command.split("\n").join("\n    ")}`).join("\n\n");
}
