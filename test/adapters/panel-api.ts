import { createServer, type Server } from "node:http";
import { afterAll, beforeAll } from "vitest";

/**
 * A stand-in for a billing panel's own API (Blesta's REST API, HostBill's admin API), on
 * 127.0.0.1 port 0: the panels themselves cannot run here. It answers from `data`, which a test
 * fills, and records every request (so a test can see what the bridge asked, and with which
 * credentials).
 */
export interface PanelApiRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  form: Record<string, string>;
  authorization: string | undefined;
}

export interface PanelApi {
  url: string;
  requests: PanelApiRequest[];
  /** Answer for a request: a JSON body (200), a number (that status), or undefined (404). */
  respond: (req: PanelApiRequest) => unknown;
  close(): Promise<void>;
}

export async function startPanelApi(respond: PanelApi["respond"]): Promise<PanelApi> {
  const api = { requests: [] as PanelApiRequest[], respond } as PanelApi;
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d: Buffer) => (body += d.toString()));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const entry: PanelApiRequest = {
        method: req.method ?? "GET",
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        form: req.headers["content-type"]?.includes("x-www-form-urlencoded") ? Object.fromEntries(new URLSearchParams(body)) : {},
        authorization: req.headers.authorization,
      };
      api.requests.push(entry);
      const answer = api.respond(entry);
      const status = typeof answer === "number" ? answer : answer === undefined ? 404 : 200;
      res.writeHead(status, { "content-type": "application/json" });
      res.end(typeof answer === "number" || answer === undefined ? JSON.stringify({ message: "no" }) : JSON.stringify(answer));
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const address = server.address();
  api.url = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  api.close = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  return api;
}

/** One stand-in for the calling `describe`; `respond` can be replaced per test through the getter. */
export function usePanelApi(respond: PanelApi["respond"]): () => PanelApi {
  let api: PanelApi | undefined;
  beforeAll(async () => {
    api = await startPanelApi(respond);
  });
  afterAll(async () => {
    await api?.close();
  });
  return () => {
    if (!api) throw new Error("usePanelApi: not started");
    return api;
  };
}
