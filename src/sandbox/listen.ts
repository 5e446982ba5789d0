import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Express } from "express";

/** A sandbox's server once listening: its base URL, and how to stop it. */
export interface ListeningServer {
  url: string;
  close(): Promise<void>;
}

/** Serves `app` on host:port (0: any free port), for every sandbox (the reseller's, Manage2's, CLN's). */
export function listenOn(app: Express, port: number, host: string): Promise<ListeningServer> {
  const server = http.createServer(app);
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const { port: actualPort } = server.address() as AddressInfo;
      resolve({
        url: `http://${host.includes(":") ? `[${host}]` : host}:${actualPort}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            // Idle keep-alive sockets would otherwise hold close() open for seconds.
            server.closeAllConnections();
          }),
      });
    });
  });
}
