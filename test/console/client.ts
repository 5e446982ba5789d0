import { createHash } from "node:crypto";
import type { Config } from "../../src/config/load.js";
import { operatorDirectory } from "../../src/http/auth.js";

/** Tokens of the operators the console tests log in as, beside ADMIN_TOKEN's admin. */
export const VIEWER_TOKEN = "console-test-viewer-token-0123";
export const OPERATOR_TOKEN = "console-test-operator-token-0123";

const sha256hex = (s: string) => createHash("sha256").update(s).digest("hex");

/** The console's operators: ADMIN_TOKEN's admin, a viewer and an operator, as an OPERATORS_FILE would list them. */
export const testOperators = (config: Config) =>
  operatorDirectory(config.ADMIN_TOKEN, [
    { name: "vera", role: "viewer", token_sha256: sha256hex(VIEWER_TOKEN) },
    { name: "otto", role: "operator", token_sha256: sha256hex(OPERATOR_TOKEN) },
  ]);

/** A browser's worth of the console over plain HTTP: its cookies, and the CSRF value of the last page. */
export class ConsoleClient {
  cookies = new Map<string, string>();
  csrf = "";
  /** Sent with every request too (e.g. the X-Forwarded-For of a proxy in front). */
  headers: Record<string, string> = {};
  constructor(readonly base: string) {}

  private remember(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(";");
      const i = pair!.indexOf("=");
      const name = pair!.slice(0, i);
      const value = pair!.slice(i + 1);
      if (value === "" || /Max-Age=0/i.test(c)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  async get(path: string): Promise<{ status: number; text: string; res: Response }> {
    const res = await fetch(this.base + path, { headers: { ...this.headers, cookie: this.cookieHeader() }, redirect: "manual" });
    this.remember(res);
    const text = await res.text();
    const m = /name="csrf" value="([^"]+)"/.exec(text);
    if (m) this.csrf = m[1]!;
    return { status: res.status, text, res };
  }

  /** Posts a form; with the page's CSRF value unless `csrf` says otherwise (null: none). */
  async post(path: string, fields: Record<string, string> = {}, csrf: string | null = this.csrf): Promise<{ status: number; text: string; res: Response }> {
    const body = new URLSearchParams({ ...fields, ...(csrf === null ? {} : { csrf }) });
    const res = await fetch(this.base + path, {
      method: "POST",
      headers: { ...this.headers, cookie: this.cookieHeader(), "content-type": "application/x-www-form-urlencoded" },
      body,
      redirect: "manual",
    });
    this.remember(res);
    return { status: res.status, text: await res.text(), res };
  }

  async login(token: string): Promise<{ status: number; text: string; res: Response }> {
    await this.get("/console/login");
    return this.post("/console/login", { token });
  }
}
