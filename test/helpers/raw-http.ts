import { connect } from "node:net";

export interface RawAnswer {
  status: number;
  /** Status line, headers and body, as received. */
  text: string;
}

/**
 * One HTTP/1.1 request whose request-target goes on the wire exactly as given. fetch and
 * http.request resolve dot segments, turn backslashes into slashes or refuse an absolute form;
 * a panel's HTTP client or a proxy may not, and the bridge must cope with what arrives.
 */
export function rawRequest(
  url: string,
  target: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  const body = options.body ?? "";
  const headers = { host: `${hostname}:${port}`, ...options.headers, "content-length": String(Buffer.byteLength(body)), connection: "close" };
  const head = `${options.method ?? "POST"} ${target} HTTP/1.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join("")}\r\n`;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), hostname, () => socket.end(head + body));
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", reject);
    socket.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(text);
      if (!status) return reject(new Error(`no HTTP answer to ${target}: ${text.slice(0, 200)}`));
      resolve({ status: Number(status[1]), text });
    });
  });
}
